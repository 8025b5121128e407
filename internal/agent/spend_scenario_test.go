package agent_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/spend"
)

func TestSessionCeilingRefusesBeforeSending(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "never"})
	r.opts.Capsule.Inference.MaxSessionTokens = ptr[int64](500) // the output cap alone is 1000
	r.launch()
	r.wantCode(1)
	r.wantStderr("E-RUN-040", "status: spend_ceiling_reached", "spend ceiling reached")
	if len(r.srv.Requests()) != 0 {
		t.Fatal("a refused call reached the provider")
	}
	got := r.result()
	if !strings.HasPrefix(got, "stopped: spend ceiling reached: ") || !strings.HasSuffix(strings.TrimSpace(got), "retrying will not get past it") {
		t.Fatalf("result.txt = %q", got)
	}
	l := r.lines("spend_ceiling_reached")
	if len(l) != 1 || l[0].String("limit") != "inference.max_session_tokens" || l[0].Int("ceiling") != 500 || l[0].Int("needed") <= 1000 {
		t.Fatalf("spend line %v", l)
	}
	for _, typ := range []string{"task_end", "session_end"} {
		if s := r.lines(typ)[0].String("exit_status"); s != "spend_ceiling_reached" {
			t.Fatalf("%s exit_status %q", typ, s)
		}
	}
}

func TestSessionCeilingAfterCharges(t *testing.T) {
	r := newRun(t, providertest.OpenAI,
		providertest.Step{Calls: []providertest.Call{writeCall("c1", "a", "1")}, InputTokens: 1500, OutputTokens: 20},
		providertest.Step{Text: "never"},
	)
	r.opts.Capsule.Inference.MaxSessionTokens = ptr[int64](3000) // first: ~est+1000 fits; then 1520 used + est + 1000 does not
	r.launch()
	r.wantCode(1)
	if n := len(r.srv.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
	l := r.lines("spend_ceiling_reached")[0]
	if l.Int("used") != 1520 {
		t.Fatalf("used %d", l.Int("used"))
	}
}

func TestMachineMeterAcrossRuns(t *testing.T) {
	first := newRun(t, providertest.Anthropic, providertest.Step{Text: "one", InputTokens: 3000, OutputTokens: 100})
	first.opts.MachineTokensPerDay = 4000
	first.launch()
	first.wantCode(0)
	// A second run on the same machine (same ~/.murmur) finds 3100 spent.
	second := newRun(t, providertest.Anthropic, providertest.Step{Text: "never"})
	second.opts.MurmurHome = first.opts.MurmurHome
	second.opts.MachineTokensPerDay = 4000
	second.launch()
	second.wantCode(1)
	second.wantStderr("spend.machine_tokens_per_day")
	if len(second.srv.Requests()) != 0 {
		t.Fatal("refused call was sent")
	}
}

// The first refusal latches the session: a later task is refused without
// reaching the provider even if the machine meter would now admit it.
func TestRefusalLatchesLaterTasks(t *testing.T) {
	srv := providertest.Start(t, providertest.Step{Text: "never"})
	home := t.TempDir()
	meter := spend.NewMachineMeter(spend.MeterPath(home), 1500)
	// Another run holds 1000 of the day's 1500 tokens.
	hold, err := spend.NewMachineMeter(spend.MeterPath(home), 1500).Admit(1000)
	if err != nil {
		t.Fatal(err)
	}
	l := agent.TestLoop(t, 600, nil, agent.Runtime{Driver: &providertest.Driver{Wire: providertest.Anthropic, Endpoint: srv.URL}, Meter: meter}, nil)
	if o := l.RunTask(context.Background(), agent.Task{ID: "t1", ContextID: "", Text: "hi"}); o.Status != agent.ExitSpendCeiling {
		t.Fatalf("first task %+v", o)
	}
	hold.Settle(0) // the other run frees its hold
	if o := l.RunTask(context.Background(), agent.Task{ID: "t2", ContextID: "", Text: "hi"}); o.Status != agent.ExitSpendCeiling || !strings.Contains(o.Reason, "spend ceiling reached") {
		t.Fatalf("second task %+v", o)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a latched session reached the provider")
	}
}

// TestCeilingRefusesRetry: the spend ceiling refusing a retry ends the task
// spend_ceiling_reached, and the call still keeps one inference record,
// charged what its attempt cost (a stream broken after 200 is a transient
// failure the driver marks, charged the request's estimate).
func TestCeilingRefusesRetry(t *testing.T) {
	steps := []providertest.Step{{Text: "a stream that breaks", BreakAfter: 2}, {Text: "ok"}}
	probe := newRun(t, providertest.Anthropic, steps...)
	probe.opts.Driver.(*providertest.Driver).Stream = true
	probe.launch()
	probe.wantCode(0)
	est := probe.lines("inference")[0].Int("input_tokens")

	r := newRun(t, providertest.Anthropic, steps...)
	r.opts.Driver.(*providertest.Driver).Stream = true
	// The first attempt (est + the 1000 cap) fits; after its charge the
	// retry (another est + 1000) does not.
	r.opts.Capsule.Inference.MaxSessionTokens = ptr[int64](2*est + 999)
	r.launch()
	r.wantCode(1)
	r.wantStderr("E-RUN-040", "status: spend_ceiling_reached")
	if n := len(r.srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	inf := r.lines("inference")
	if len(inf) != 1 {
		t.Fatalf("%d inference lines, want the call's one record", len(inf))
	}
	if inf[0].Int("charged") != est || inf[0].String("retry_stopped") != "" {
		t.Fatalf("inference record %v: want charged %d and no retry_stopped", inf[0].Fields, est)
	}
	if len(r.lines("inference_retry")) != 1 || len(r.lines("spend_ceiling_reached")) != 1 {
		t.Fatal("want one inference_retry line and the refusal's line")
	}
}

// TestSettleFailureFailsTask: when the machine meter cannot record a call's
// charge (its file was damaged while the call was out), the task fails
// naming E-SPEND-001 instead of going on with spending the meter no longer
// counts.
func TestSettleFailureFailsTask(t *testing.T) {
	srv := providertest.Start(t,
		providertest.Step{Calls: []providertest.Call{writeCall("c1", "a", "1")}, InputTokens: 10, OutputTokens: 5},
		providertest.Step{Text: "never"})
	path := spend.MeterPath(t.TempDir())
	inner := &providertest.Driver{Wire: providertest.Anthropic, Endpoint: srv.URL}
	damaging := agent.DriverFunc(func(ctx context.Context, data []byte) (agent.Result, error) {
		out, err := inner.Run(ctx, data)
		if werr := os.WriteFile(path, []byte("{"), 0o600); werr != nil {
			t.Error(werr)
		}
		return out, err
	})
	l := agent.TestLoop(t, 100, nil, agent.Runtime{Driver: damaging, Meter: spend.NewMachineMeter(path, 1_000_000)}, nil)
	o := l.RunTask(context.Background(), agent.Task{ID: "t1", ContextID: "", Text: "hi"})
	if o.Status != agent.ExitFailed || !strings.Contains(o.Reason, "E-SPEND-001") || !strings.Contains(o.Reason, "could not be recorded") {
		t.Fatalf("task %+v", o)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests after the meter broke, want 1", n)
	}
}
