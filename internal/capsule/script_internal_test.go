package capsule

import (
	"context"
	"errors"
	"testing"

	"github.com/murmur/mur/internal/component"
)

// TestScriptRunInference: in a script capsule a hook's or tool's
// run-inference is refused with a reason naming the script capsule,
// never errNoLoopYet's "not open yet", whose cause (on-stage) is not
// what happened.
func TestScriptRunInference(t *testing.T) {
	var ref loopRef
	ref.script.Store(true)
	_, err := ref.inferenceFor("hook:murmur/h").RunInference(context.Background(), component.InferenceRequest{})
	if !errors.Is(err, errNoModel) {
		t.Fatalf("err = %v, want errNoModel", err)
	}
	var agentRef loopRef
	if _, err := agentRef.inferenceFor("hook:murmur/h").RunInference(context.Background(), component.InferenceRequest{}); !errors.Is(err, errNoLoopYet) {
		t.Fatalf("agent capsule before its loop: err = %v", err)
	}
}

// TestCappedOutput: a script's stdout keeps at most maxScriptOutput bytes
// and says it was cut; the tail of its stderr prefers a panic line.
func TestCappedOutput(t *testing.T) {
	var c capped
	big := make([]byte, maxScriptOutput+10)
	for i := range big {
		big[i] = 'x'
	}
	if n, err := c.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if s := c.String(); len(s) != maxScriptOutput+len("\n[output truncated]") {
		t.Fatalf("kept %d bytes", len(s))
	}
	var e capped
	e.Write([]byte("starting\npanic: capsule run: no notes\n\ngoroutine 1 [running]:\nmain.run()\n"))
	if got := e.tail(); got != "panic: capsule run: no notes" {
		t.Fatalf("tail = %q", got)
	}
	var js capped
	js.Write([]byte("file-go: error: denied\nStack:\n  call@index.js:6:11\n  run@index.js:13:24\n\nRedirecting call to abort() to mozalloc_abort\n"))
	if got := js.tail(); got != "file-go: error: denied" {
		t.Fatalf("tail of a JS guest's uncaught error = %q", got)
	}
}
