package component

import (
	"context"
	"strings"
	"testing"
)

type fixedInference struct{ text string }

func (f fixedInference) RunInference(context.Context, InferenceRequest) (InferenceResponse, error) {
	return InferenceResponse{Text: f.text, ModelUsed: "m"}, nil
}

// TestRunInferenceNotServed: a component whose Host serves no inference
// gets run-inference's err saying so — not a claim that the capsule has
// no driver — and one whose Host serves it gets the response.
func TestRunInferenceNotServed(t *testing.T) {
	r := newRuntime(t)
	c := compileFixture(t, r, "inference-probe.wat")
	probe := func(h *Host) string {
		inst, err := r.Instantiate(context.Background(), c, Options{Name: "test/probe", Host: h})
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close()
		f, err := inst.inst.Func("probe")
		if err != nil {
			t.Fatal(err)
		}
		v, err := f.Call(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return v.Str()
	}
	if got := probe(nil); !strings.Contains(got, ErrNotAvailable.Error()) || strings.Contains(got, "driver") {
		t.Errorf("unserved: %q", got)
	}
	if got := probe(&Host{Inference: fixedInference{"hi"}}); got != "ok:" {
		t.Errorf("served: %q", got)
	}
}

// TestLifecycleImportTraps: a component importing every function of
// murmur:hook/lifecycle@0.5.0 (a JS guest that calls run-inference does:
// componentize-js keeps that interface whole) instantiates, and a call
// to one of them traps naming it and saying the host does not serve it.
func TestLifecycleImportTraps(t *testing.T) {
	r := newRuntime(t)
	c := compileFixture(t, r, "lifecycle-import.wat")
	inst, err := r.Instantiate(context.Background(), c, Options{Name: "test/js-guest", Host: &Host{Inference: fixedInference{"hi"}}})
	if err != nil {
		t.Fatalf("a component importing murmur:hook/lifecycle does not instantiate: %v", err)
	}
	defer inst.Close()
	f, err := inst.inst.Func("probe")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Call(context.Background())
	if err == nil || !strings.Contains(err.Error(), IfaceLifecycle+"#on-compaction") || !strings.Contains(err.Error(), ErrLifecycleImport.Error()) {
		t.Fatalf("calling an imported lifecycle function: %v", err)
	}
}
