package component

import (
	"context"
	"strings"
	"testing"
)

// TestToolRunImportTraps: a component importing murmur:tool/run@0.1.0's
// run (a JS script capsule does: componentize-js keeps the interface
// tool-registry/invoke uses whole) instantiates, and a call to it traps
// naming it and saying the host does not serve it.
func TestToolRunImportTraps(t *testing.T) {
	r := newRuntime(t)
	c := compileFixture(t, r, "toolrun-import.wat")
	inst, err := r.Instantiate(context.Background(), c, Options{Name: "test/js-script", Host: &Host{}})
	if err != nil {
		t.Fatalf("a component importing murmur:tool/run's run does not instantiate: %v", err)
	}
	defer inst.Close()
	f, err := inst.inst.Func("probe")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Call(context.Background())
	if err == nil || !strings.Contains(err.Error(), IfaceToolRun+"#run") || !strings.Contains(err.Error(), ErrToolRunImport.Error()) {
		t.Fatalf("calling the imported murmur:tool/run#run: %v", err)
	}
}
