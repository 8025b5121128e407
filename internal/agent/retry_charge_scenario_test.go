package agent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/trace"
)

// sumCharged is what a session's inference lines say it was charged.
func sumCharged(lines []trace.Line) int64 {
	var n int64
	for _, l := range lines {
		n += l.Int("charged")
	}
	return n
}

// fields renders a line's fields readably for a failure message.
func fields(l trace.Line) map[string]string {
	m := map[string]string{}
	for k, v := range l.Fields {
		m[k] = string(v)
	}
	return m
}

// A retried attempt that failed after the provider answered 200 (a stream
// that broke: the driver says transient itself) is charged by the spend
// meters, so its charge appears wherever the call's does (spec 004,
// inference.retry and Session spend ceiling): on its inference_retry line,
// in the call's one inference record, in task_end and session_end, and in
// the status line; the inference lines add up to what the machine meter
// recorded. Both wires' drivers.
func TestRetriedAfter200ChargeIsTraced(t *testing.T) {
	for _, wire := range []string{providertest.Anthropic, providertest.OpenAI} {
		t.Run(wire, func(t *testing.T) {
			r := newRun(t, wire,
				providertest.Step{Text: "This answer will be cut short", BreakAfter: 3},
				providertest.Step{Text: "Whole answer.", InputTokens: 10, OutputTokens: 3},
			)
			r.opts.Driver.(*providertest.Driver).Stream = true
			r.opts.MachineTokensPerDay = 1 << 30
			r.launch()
			r.wantCode(0)
			inf := r.lines("inference")
			if len(inf) != 1 {
				t.Fatalf("%d inference records", len(inf))
			}
			est := inf[0].Int("input_tokens")
			retries := r.lines("inference_retry")
			if est <= 0 || len(retries) != 1 || retries[0].Int("charged") != est {
				var got []map[string]string
				for _, l := range retries {
					got = append(got, fields(l))
				}
				t.Fatalf("inference_retry %v (estimate %d)", got, est)
			}
			want := 13 + est
			if inf[0].Int("charged") != want || inf[0].Int("attempts") != 2 {
				t.Fatalf("inference record %v, want charged %d", fields(inf[0]), want)
			}
			if end := r.lines("task_end")[0]; end.Int("input_tokens") != 10+est || end.Int("output_tokens") != 3 || end.Int("turns") != 1 {
				t.Fatalf("task_end %v", fields(end))
			}
			if end := r.lines("session_end")[0]; end.Int("input_tokens")+end.Int("output_tokens") != want {
				t.Fatalf("session_end %v", fields(end))
			}
			r.wantStderr(fmt.Sprintf("status: ok (1 turns, %d tokens;", want))
			used, err := spend.NewMachineMeter(spend.MeterPath(r.opts.MurmurHome), 1<<30).Used()
			if err != nil || used != sumCharged(inf) {
				t.Fatalf("the machine meter recorded %d (%v), the inference lines %d", used, err, sumCharged(inf))
			}
		})
	}
}

// A call whose every attempt broke after a 200 until max_retries stopped it
// is charged each attempt's estimate, and the failed call's record, the
// task's totals and the status line carry all of them.
func TestRetriedAfter200ChargesOfAFailedCall(t *testing.T) {
	broke := providertest.Step{Text: "This answer will be cut short", BreakAfter: 3}
	r := newRun(t, providertest.Anthropic, broke, broke, broke)
	r.opts.Driver.(*providertest.Driver).Stream = true
	r.opts.Capsule.Inference.Retry.MaxRetries = ptr[int64](2)
	r.opts.MachineTokensPerDay = 1 << 30
	r.launch()
	r.wantCode(1)
	inf := r.lines("inference")
	if len(inf) != 1 {
		t.Fatalf("%d inference records", len(inf))
	}
	est := inf[0].Int("input_tokens")
	if inf[0].Int("charged") != 3*est || inf[0].Int("attempts") != 3 || inf[0].String("retry_stopped") != "max_retries" {
		t.Fatalf("inference record %v, want charged %d", fields(inf[0]), 3*est)
	}
	for _, l := range r.lines("inference_retry") {
		if l.Int("charged") != est {
			t.Fatalf("inference_retry %v", fields(l))
		}
	}
	if end := r.lines("task_end")[0]; end.Int("input_tokens") != 3*est {
		t.Fatalf("task_end %v", fields(end))
	}
	r.wantStderr(fmt.Sprintf("(3 attempts; retry stopped: max_retries) (1 turns, %d tokens;", 3*est))
	used, err := spend.NewMachineMeter(spend.MeterPath(r.opts.MurmurHome), 1<<30).Used()
	if err != nil || used != 3*est {
		t.Fatalf("the machine meter recorded %d (%v), want %d", used, err, 3*est)
	}
}

// A cancel during the wait after an attempt that broke after a 200 ends
// the task canceled; the call still keeps its one inference record, with
// the attempt's charge, and the task's totals carry it.
func TestCancelDuringWaitKeepsTheCharge(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := newRun(t, providertest.OpenAI, providertest.Step{Text: "This answer will be cut short", BreakAfter: 3}, providertest.Step{Text: "never"})
	r.opts.Driver.(*providertest.Driver).Stream = true
	r.opts.Sleep = func(ctx context.Context, _ time.Duration) error {
		cancel()
		return ctx.Err()
	}
	code, err := r.launchCtx(ctx)
	if err != nil || code != capsule.ExitCanceled {
		t.Fatalf("code %d err %v", code, err)
	}
	inf := r.lines("inference")
	if len(inf) != 1 {
		t.Fatalf("%d inference records", len(inf))
	}
	est := inf[0].Int("input_tokens")
	if est <= 0 || inf[0].Int("charged") != est || inf[0].String("error") == "" {
		t.Fatalf("inference record %v", fields(inf[0]))
	}
	if end := r.lines("task_end")[0]; end.String("exit_status") != "canceled" || end.String("phase") != "inference" || end.Int("input_tokens") != est {
		t.Fatalf("task_end %v", fields(end))
	}
	r.wantStderr(fmt.Sprintf("status: canceled: the task was canceled (0 turns, %d tokens;", est))
}
