package agent_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/providertest"
)

func TestCappedLastTurnIsAFragment(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "The answer is", Stop: "max_tokens"})
	r.opts.Capsule.Inference.MaxTurns = ptr[int64](1)
	r.launch()
	r.wantCode(0)
	r.wantStderr("W-RUN-001", "status: ok")
	if got := r.result(); !strings.HasPrefix(got, "The answer is") || !strings.Contains(got, "[fragment") {
		t.Fatalf("result.txt = %q", got)
	}
	if end := r.lines("task_end")[0]; end.String("exit_status") != "ok" || !strings.Contains(string(end.Fields["fragment"]), "true") {
		t.Fatalf("task_end %v", end.Fields)
	}
}

func TestCappedTurnDropsToolCallsAndGoesOn(t *testing.T) {
	r := newRun(t, providertest.OpenAI,
		providertest.Step{Text: "Let me", Calls: []providertest.Call{writeCall("c1", "x.txt", "x")}, Stop: "max_tokens"},
		providertest.Step{Text: "Short answer."},
	).launch()
	r.wantCode(0)
	if _, err := os.Stat(r.workdir + "/x.txt"); err == nil {
		t.Fatal("a capped turn's tool call ran")
	}
	second := requestText(r.srv.Requests()[1])
	if !strings.Contains(second, "cut off at the output cap of 1000 tokens. Its tool calls (write) were not run.") {
		t.Fatalf("no cut message: %s", second)
	}
	if strings.Contains(second, `"tool_calls"`) {
		t.Fatalf("the dropped call was sent back: %s", second)
	}
	if r.result() != "Short answer." {
		t.Fatalf("result %q", r.result())
	}
}

// A turn the provider cut at the output cap in the middle of a tool
// call's input ends the turn, not the task (spec 004, When a turn hits
// the cap), through both wires' drivers, streamed and (OpenAI) whole: the
// call is dropped unrun, the model reads the note naming it, and the task
// goes on; on the last allowed turn it ends ok with the fragment.
func TestCutInsideToolCallEndsTheTurn(t *testing.T) {
	cut := []providertest.Call{{ID: "c1", Name: "write", Input: `{"path":"x.txt","content":"the long no`}}
	for _, c := range []struct {
		wire   string
		stream bool
	}{{providertest.Anthropic, true}, {providertest.OpenAI, true}, {providertest.OpenAI, false}} {
		t.Run(fmt.Sprintf("%s/stream=%v", c.wire, c.stream), func(t *testing.T) {
			r := newRun(t, c.wire,
				providertest.Step{Text: "Writing it", Calls: cut, Stop: "max_tokens", InputTokens: 30, OutputTokens: 1000},
				providertest.Step{Text: "Done, in smaller steps.", InputTokens: 60, OutputTokens: 6},
			)
			r.opts.Driver.(*providertest.Driver).Stream = c.stream
			r.launch()
			r.wantCode(0)
			if _, err := os.Stat(r.workdir + "/x.txt"); err == nil {
				t.Fatal("the cut tool call ran")
			}
			if n := len(r.lines("tool_call")); n != 0 {
				t.Fatalf("%d tool_call lines", n)
			}
			if inf := r.lines("inference")[0]; inf.String("stop_reason") != "max_tokens" {
				t.Fatalf("first inference %v", inf.Fields)
			}
			second := requestText(r.srv.Requests()[1])
			if !strings.Contains(second, "cut off at the output cap of 1000 tokens. Its tool calls (write) were not run.") || !strings.Contains(second, "Writing it") {
				t.Fatalf("the model did not read the cut: %s", second)
			}
			if r.result() != "Done, in smaller steps." {
				t.Fatalf("result %q", r.result())
			}

			last := newRun(t, c.wire, providertest.Step{Text: "Writing it", Calls: cut, Stop: "max_tokens", InputTokens: 30, OutputTokens: 1000})
			last.opts.Driver.(*providertest.Driver).Stream = c.stream
			last.opts.Capsule.Inference.MaxTurns = ptr[int64](1)
			last.launch()
			last.wantCode(0)
			last.wantStderr("W-RUN-001", "status: ok")
			if got := last.result(); !strings.HasPrefix(got, "Writing it\n\n[fragment") {
				t.Fatalf("result.txt = %q", got)
			}
			if _, err := os.Stat(last.workdir + "/x.txt"); err == nil {
				t.Fatal("the cut tool call ran on the last turn")
			}
		})
	}
}

func TestTwoEmptyCappedTurnsFail(t *testing.T) {
	r := newRun(t, providertest.Anthropic,
		providertest.Step{Stop: "max_tokens"},
		providertest.Step{Stop: "max_tokens"},
	)
	r.opts.Capsule.Inference.MaxTurns = ptr[int64](2) // the second is also the last: it still fails
	r.launch()
	r.wantCode(1)
	r.wantStderr("E-RUN-040", "status: failed")
	f := r.lines("task_failed")
	if len(f) != 1 || f[0].String("cause") != "output_cap" {
		t.Fatalf("task_failed %v", f)
	}
}

func TestMaxTurnsReached(t *testing.T) {
	r := newRun(t, providertest.Anthropic,
		providertest.Step{Calls: []providertest.Call{writeCall("c1", "a", "1")}},
		providertest.Step{Calls: []providertest.Call{writeCall("c2", "b", "2")}},
		providertest.Step{Text: "never asked"},
	)
	r.opts.Capsule.Inference.MaxTurns = ptr[int64](2)
	r.launch()
	r.wantCode(1)
	r.wantStderr("status: max_turns_reached")
	if r.srv.Remaining() != 1 {
		t.Fatal("a third call was made past max_turns")
	}
	if e := r.lines("session_end")[0]; e.String("exit_status") != "max_turns_reached" {
		t.Fatalf("session_end %v", e.Fields)
	}
}
