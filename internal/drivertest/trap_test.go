package drivertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/agent/wasmtool"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/capsule/capsuletest"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/trace"
	"github.com/murmur/mur/internal/wasm/cm"
)

// trappingDriver is a driver component whose run traps: the component
// package's echo tool with an unreachable reached through a call, so the
// trap carries a WebAssembly backtrace of more than one frame.
func trappingDriver(t *testing.T) *component.Tool {
	t.Helper()
	src, err := os.ReadFile("../component/testdata/echo-tool.wat")
	if err != nil {
		t.Fatal(err)
	}
	run := `(func (export "run") (param $dd i32) (param $dp i32) (param $dl i32) (param i32 i32 i32) (result i32)`
	wat := strings.Replace(string(src), run, "(func $boom unreachable)\n    "+run+"\n      (call $boom)", 1)
	if wat == string(src) {
		t.Fatal("echo-tool.wat no longer has the run function this test rewrites")
	}
	c, err := runtime(t).CompileText(wat)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := runtime(t).Instantiate(context.Background(), c, component.Options{Name: "test/trapping-driver", Limits: cm.Limits{Deadline: 60 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	tool, err := inst.Tool()
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// A driver that traps fails the task with a reason of one line: the status
// line and out/result.txt stay one line each, and the trap's whole text,
// its WebAssembly backtrace, is in the session's logs/inference.log.
func TestDriverTrapReasonIsOneLine(t *testing.T) {
	var stderr strings.Builder
	c, inst := capsuletest.Capsule(t, capsuletest.Spec{Driver: "test/trapping-driver", OutputCap: 100, Window: 10000})
	code, dirs, err := launch(capsule.Parts{
		Capsule: c, Installed: inst,
		ManifestDir: t.TempDir(), MurmurHome: t.TempDir(), LaunchTask: "Answer.",
		Driver: wasmtool.Driver{R: trappingDriver(t)},
		Stderr: &stderr,
	})
	if err != nil || code != capsule.ExitTask {
		t.Fatalf("code %d err %v: %s", code, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	status := lines[len(lines)-1]
	if !strings.Contains(status, " status: failed: driver call failed: ") ||
		!strings.Contains(status, "wasm trap: wasm `unreachable` instruction executed; the whole text is in logs/inference.log (1 turns, ") {
		t.Fatalf("the status line is not the last line, or not the trap's first line:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "    at ") {
		t.Fatalf("the backtrace reached stderr:\n%s", stderr.String())
	}
	res, err := os.ReadFile(dirs.Result())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(res), "failed: driver call failed: ") || !strings.Contains(string(res), "wasm trap") || strings.Count(string(res), "\n") != 1 || !strings.HasSuffix(string(res), "\n") {
		t.Fatalf("out/result.txt is not one line: %q", res)
	}
	log, err := os.ReadFile(filepath.Join(dirs.Logs(), "inference.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "turn 1 attempt 1: driver call failed: ") || strings.Count(string(log), "\n    at ") < 2 {
		t.Fatalf("logs/inference.log lacks the backtrace:\n%s", log)
	}
	all, err := trace.ReadFile(dirs.Trace())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range append(trace.Filter(all, "task_failed"), trace.Filter(all, "inference")...) {
		for _, k := range []string{"reason", "error"} {
			if v := l.String(k); strings.Contains(v, "\n") {
				t.Fatalf("%s.%s is several lines: %q", l.Event, k, v)
			}
		}
	}
}
