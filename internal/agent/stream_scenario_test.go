package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/spend"
)

func TestStreamingBothWires(t *testing.T) {
	for _, wire := range []string{providertest.Anthropic, providertest.OpenAI} {
		t.Run(wire, func(t *testing.T) {
			r := newRun(t, wire,
				providertest.Step{Text: "Writing the file now.", Calls: []providertest.Call{writeCall("c1", "s.txt", "streamed")}, InputTokens: 40, OutputTokens: 12},
				providertest.Step{Text: "All written, héllo.", InputTokens: 60, OutputTokens: 6, CachedTokens: 30},
			)
			var mu sync.Mutex
			var deltas []string
			d := r.opts.Driver.(*providertest.Driver)
			d.Stream = true
			d.OnText = func(s string) { mu.Lock(); deltas = append(deltas, s); mu.Unlock() }
			r.launch()
			r.wantCode(0)
			if b, _ := os.ReadFile(filepath.Join(r.workdir, "s.txt")); string(b) != "streamed" {
				t.Fatalf("streamed tool call input lost: %q", b)
			}
			if r.result() != "All written, héllo." || len(deltas) < 4 || strings.Join(deltas, "") != "Writing the file now.All written, héllo." {
				t.Fatalf("result %q deltas %q", r.result(), deltas)
			}
			inf := r.lines("inference")[1]
			if inf.Int("input_tokens_actual") != 60 || inf.Int("cached_tokens") != 30 || inf.Int("charged") != 96 {
				t.Fatalf("usage %v", inf.Fields)
			}
		})
	}
}

// A stream that breaks after the provider answered 200 is reported
// transient by the driver and retried; the failed attempt is charged to
// the spend ceiling, and so to the call's record and the task's totals
// (TestRetriedAfter200ChargeIsTraced), but it is not a turn.
func TestStreamBrokenAfter200IsRetried(t *testing.T) {
	r := newRun(t, providertest.Anthropic,
		providertest.Step{Text: "This answer will be cut short", BreakAfter: 3},
		providertest.Step{Text: "Whole answer.", InputTokens: 10, OutputTokens: 3},
	)
	r.opts.Driver.(*providertest.Driver).Stream = true
	r.launch()
	r.wantCode(0)
	if r.result() != "Whole answer." {
		t.Fatalf("result %q: the broken attempt leaked", r.result())
	}
	if n := len(r.lines("inference_retry")); n != 1 {
		t.Fatalf("%d retries", n)
	}
	if end := r.lines("task_end")[0]; end.Int("turns") != 1 || end.Int("input_tokens") <= 10 || end.Int("output_tokens") != 3 {
		t.Fatalf("task_end %v: a retry counted as a turn, or its charge left out", end.Fields)
	}

	// The same against a session ceiling: the broken attempt's estimate is
	// charged, so the ceiling sees more than the successful call.
	srv := providertest.Start(t,
		providertest.Step{Text: "cut", BreakAfter: 2},
		providertest.Step{Text: "ok", InputTokens: 10, OutputTokens: 3})
	ceiling := spend.NewSessionCeiling(1 << 20)
	l := agent.TestLoop(t, 100, nil, agent.Runtime{Driver: &providertest.Driver{Wire: providertest.Anthropic, Endpoint: srv.URL, Stream: true},
		Meter: ceiling, Sleep: func(context.Context, time.Duration) error { return nil }}, nil)
	if o := l.RunTask(context.Background(), agent.Task{ID: "t", ContextID: "", Text: "hello there"}); o.Status != agent.ExitOK {
		t.Fatalf("%+v", o)
	}
	if used := ceiling.Used(); used <= 13 {
		t.Fatalf("ceiling charged %d: the transient failure cost nothing", used)
	}
}

// A retried attempt that failed on a provider status costs nothing.
func TestRetriedStatusFailureChargedNothing(t *testing.T) {
	srv := providertest.Start(t, fail(503, "busy"), providertest.Step{Text: "ok", InputTokens: 10, OutputTokens: 3})
	ceiling := spend.NewSessionCeiling(1 << 20)
	l := agent.TestLoop(t, 100, nil, agent.Runtime{Driver: &providertest.Driver{Wire: providertest.OpenAI, Endpoint: srv.URL},
		Meter: ceiling, Sleep: func(context.Context, time.Duration) error { return nil }}, nil)
	if o := l.RunTask(context.Background(), agent.Task{ID: "t", ContextID: "", Text: "hello there"}); o.Status != agent.ExitOK {
		t.Fatalf("%+v", o)
	}
	if used := ceiling.Used(); used != 13 {
		t.Fatalf("ceiling charged %d, want 13", used)
	}
}
