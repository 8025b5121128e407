package tool

import (
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

func str(s string) *string { return &s }

func TestLiftInput(t *testing.T) {
	m := abitest.New(1 << 12)
	data := m.Put([]byte(`{"x":1}`))
	log := m.Put([]byte("/logs/t.log"))
	tests := []struct {
		name string
		flat [6]uint32
		want Input
	}{
		{"both", [6]uint32{1, data, 7, 1, log, 11}, Input{Data: str(`{"x":1}`), LogPath: str("/logs/t.log")}},
		{"none", [6]uint32{0, 999, 999, 0, 999, 999}, Input{}},
		{"empty data", [6]uint32{1, 0, 0, 0, 0, 0}, Input{Data: str("")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.flat
			got := liftInput(m, f[0], f[1], f[2], f[3], f[4], f[5])
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// decodeResult reads a tool-result by the canonical ABI's layout, written
// out independently of lowerResult.
func decodeResult(m *abitest.Memory, p uint32) Result {
	opt := func(at uint32) *string {
		if m.Data[at] == 0 {
			return nil
		}
		s := abi.GetString(m, at+4)
		return &s
	}
	r := Result{
		Status:    Status(m.Data[p]),
		Summary:   opt(p + 4),
		Data:      opt(p + 16),
		DataPath:  opt(p + 28),
		Truncated: m.Data[p+40] == 1,
	}
	n := abi.U32(m, p+48)
	if n > 0 {
		r.Metadata = abi.Pairs(m, abi.U32(m, p+44), n)
	}
	return r
}

func TestLowerResult(t *testing.T) {
	tests := []struct {
		name string
		r    Result
	}{
		{"passed", Passed("out")},
		{"failed", Failed("no such file")},
		{"error", Errorf("bad %s", "input")},
		{"everything", Result{Status: StatusPassed, Summary: str("s"), Data: str("d"), DataPath: str("/p"), Truncated: true,
			Metadata: [][2]string{{"state_effect", "read"}, {"resource_id", "file:a"}, {"resource_id", "file:b"}}}},
		{"empty strings", Result{Summary: str(""), Data: str("")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := abitest.New(1 << 12)
			p := lowerResult(m, tt.r)
			if p%resultAlign != 0 {
				t.Fatalf("result at %d is not %d-aligned", p, resultAlign)
			}
			if got := decodeResult(m, p); !reflect.DeepEqual(got, tt.r) {
				t.Errorf("round trip got %+v, want %+v", got, tt.r)
			}
		})
	}
}

func TestResultHelpers(t *testing.T) {
	r := Passed("x").Effect(EffectMutate, "file:a")
	want := [][2]string{{MetaStateEffect, "mutate"}, {MetaResourceID, "file:a"}}
	if !reflect.DeepEqual(r.Metadata, want) {
		t.Errorf("Effect metadata = %v, want %v", r.Metadata, want)
	}
	// With never aliases the metadata of the result it extends.
	base := Passed("x").With("a", "1")
	one, two := base.With("b", "2"), base.With("c", "3")
	if one.Metadata[1][0] != "b" || two.Metadata[1][0] != "c" {
		t.Errorf("With aliased: %v %v", one.Metadata, two.Metadata)
	}
	if got := (Input{}).Text(); got != "" {
		t.Errorf("Text of empty input = %q", got)
	}
	for s, want := range map[Status]string{StatusPassed: "passed", StatusFailed: "failed", StatusError: "error", 9: "status(9)"} {
		if s.String() != want {
			t.Errorf("Status(%d) = %q, want %q", uint8(s), s.String(), want)
		}
	}
}

func TestCallWithoutHandler(t *testing.T) {
	handler = nil
	if r := call(Input{}); r.Status != StatusError {
		t.Errorf("call with no handler = %+v, want an error result", r)
	}
	Run(func(in Input) Result { return Passed(in.Text()) })
	t.Cleanup(func() { handler = nil })
	if r := call(Input{Data: str("hi")}); *r.Data != "hi" {
		t.Errorf("call = %+v", r)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Run did not panic")
		}
	}()
	Run(func(Input) Result { return Result{} })
}
