package shell

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkBareExec is the baseline: fork/exec of the same binary with no
// pipes, environment rows, read-only check or records.
func BenchmarkBareExec(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	for b.Loop() {
		if err := exec.Command(path).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCall is one shell tool call through this package with a no-op
// container: resolve, read-only check, environment, pipes, process group,
// output-holder wait, result and record.
func BenchmarkCall(b *testing.B) {
	f := newFixture(b, func(p *Policy) { p.Allow = []string{"true"}; p.ReadOnly = []string{"tests"} })
	ctx := context.Background()
	for b.Loop() {
		if _, err := f.s.Call(ctx, "true", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallContained is the same call through the real sandbox
// (privileged hosts only).
func BenchmarkCallContained(b *testing.B) {
	f, _ := contained(b, func(p *Policy) { p.Allow = []string{"true"} })
	ctx := context.Background()
	for b.Loop() {
		if _, err := f.s.Call(ctx, "true", ""); err != nil {
			b.Fatal(err)
		}
	}
}
