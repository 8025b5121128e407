package drivertest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/agent/wasmtool"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/capsule/capsuletest"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/trace"
)

// noteTool is a Go tool the model calls in the loop.
type noteTool struct{ calls int }

func (n *noteTool) Def() agent.ToolDef {
	return agent.ToolDef{Name: "read_note", Description: "Read a note by name.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
}

func (n *noteTool) Call(_ context.Context, in json.RawMessage) (agent.Result, error) {
	n.calls++
	return agent.Result{Status: agent.StatusPassed, Data: "the note " + string(in) + " says: ship it"}, nil
}

// The agent loop runs a multi-turn tool-using task through each real
// driver component, the gateway and HTTP on loopback.
func TestAgentLoopThroughTheDriver(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv, up := double(t, w,
				providertest.Step{Text: "Let me read it.", Calls: []providertest.Call{{ID: "call_a", Name: "read_note", Input: `{"name":"release"}`}}, InputTokens: 50, OutputTokens: 10},
				providertest.Step{Text: "The note says: ship it.", InputTokens: 80, OutputTokens: 7})
			in := start(t, w, setup{Upstream: up, Key: testKey})
			note := &noteTool{}
			var stderr strings.Builder
			c, inst := capsuletest.Capsule(t, capsuletest.Spec{Driver: "murmur/" + w.name, Model: w.model, OutputCap: 512})
			code, dirs, err := launch(capsule.Parts{
				Capsule: c, Installed: inst,
				ManifestDir: t.TempDir(), MurmurHome: t.TempDir(), LaunchTask: "What does the release note say?",
				Driver: wasmtool.Driver{R: in.tool},
				Tools:  []agent.Tool{note},
				Stderr: &stderr,
			})
			if err != nil || code != 0 {
				t.Fatalf("code %d err %v: %s", code, err, stderr.String())
			}
			if note.calls != 1 {
				t.Fatalf("tool called %d times", note.calls)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || !strings.Contains(string(reqs[1].Raw), "ship it") || !strings.Contains(string(reqs[1].Raw), "call_a") {
				t.Fatalf("upstream requests: %d; second %s", len(reqs), reqs[len(reqs)-1].Raw)
			}
			lines, err := trace.ReadFile(dirs.Trace())
			if err != nil {
				t.Fatal(err)
			}
			if inf := trace.Filter(lines, "inference"); len(inf) != 2 {
				t.Fatalf("%d inference lines", len(inf))
			}
			if tc := trace.Filter(lines, "tool_call"); len(tc) != 1 || tc[0].String("status") != "passed" {
				t.Fatalf("tool_call lines %v", tc)
			}
		})
	}
}

// launch runs a launch task on a session opened from parts, as mur run
// does, and returns its exit status and folders.
func launch(p capsule.Parts) (int, session.Dirs, error) {
	s, err := capsule.OpenParts(context.Background(), p)
	if err != nil {
		return capsule.ExitRefused, session.Dirs{}, err
	}
	out := s.RunLaunchTask(context.Background(), nil)
	return capsule.ExitStatus(out), s.Dirs(), s.Close(out)
}
