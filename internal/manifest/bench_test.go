package manifest

import (
	"os"
	"testing"
)

// BenchmarkParseSupportedShape parses and validates the spec's "Supported
// shape" example, made valid. Goal: under 1 ms.
func BenchmarkParseSupportedShape(b *testing.B) {
	data, err := os.ReadFile("testdata/supported_shape.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	start := processCPU()
	for b.Loop() {
		c, ds := ParseCapsule("murmur.yaml", data)
		if c == nil || ds.HasErrors() {
			b.Fatal(ds)
		}
	}
	if cpu := processCPU() - start; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkEffective measures the defaults view doctor --effective and
// ExplainScope build.
func BenchmarkEffective(b *testing.B) {
	data, err := os.ReadFile("testdata/supported_shape.yaml")
	if err != nil {
		b.Fatal(err)
	}
	c, _ := ParseCapsule("murmur.yaml", data)
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Effective()
	}
}
