package main

import (
	"slices"
	"strings"
	"testing"

	pd "github.com/murmur/mur/sdk/go/processdriver"
)

func str(s string) *string { return &s }

func TestLaunchNoAgentsMDNoBuiltinsProviderAndServer(t *testing.T) {
	plan, err := (&codex{}).Launch(pd.LaunchRequest{
		Prompt: "do it", SystemPrompt: str("be \"brief\""), Model: str("gpt-x"), Config: str(`{"base_url":"http://127.0.0.1:9/v1"}`),
		ResumeSession: str("th-1"),
		Tools:         &pd.ToolServer{URL: "http://127.0.0.1:5/mcp", Token: "tok", ToolNames: []string{"a", "sh"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(plan.Args, "\x00")
	for _, want := range [][]string{
		{"exec", "--json"}, {"-c", "project_doc_max_bytes=0"}, {"--disable", "shell_tool"}, {"--disable", "unified_exec"},
		{"-m", "gpt-x"}, {"-c", `instructions="be \"brief\""`},
		{"-c", `model_provider="murmur-base-url"`},
		{"-c", `model_providers.murmur-base-url={name="murmur-base-url",base_url="http://127.0.0.1:9/v1",wire_api="responses"}`},
		{"-c", `mcp_servers.murmur.url="http://127.0.0.1:5/mcp"`},
		{"-c", `mcp_servers.murmur.bearer_token_env_var="MUR_TOOL_SERVER_TOKEN"`},
		{"-c", `mcp_servers.murmur.enabled_tools=["a","sh"]`},
		{"resume", "th-1", "-"},
	} {
		if !strings.Contains(args, strings.Join(want, "\x00")) {
			t.Errorf("args %q lack %q", plan.Args, want)
		}
	}
	if strings.Contains(args, "tok\x00") || plan.Args[len(plan.Args)-1] != "-" {
		t.Errorf("args %q", plan.Args)
	}
	if !slices.Contains(plan.EnvSet, [2]string{"MUR_TOOL_SERVER_TOKEN", "tok"}) {
		t.Errorf("env-set %q", plan.EnvSet)
	}
	if string(plan.Stdin) != "do it" || !plan.CloseStdin {
		t.Errorf("stdin %q close %v", plan.Stdin, plan.CloseStdin)
	}
}

func TestLaunchWithoutToolsOrConfig(t *testing.T) {
	plan, err := (&codex{}).Launch(pd.LaunchRequest{Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if a := strings.Join(plan.Args, " "); strings.Contains(a, "mcp_servers") || strings.Contains(a, "model_provider") || strings.Contains(a, "resume") {
		t.Errorf("args %q", plan.Args)
	}
	if _, err := (&codex{}).Launch(pd.LaunchRequest{Config: str(`{"model":"x"}`)}); err == nil {
		t.Error("an unknown config key was accepted")
	}
}

// Events as codex exec --json 0.171.0 prints them.
func TestParseEvents(t *testing.T) {
	d := &codex{}
	if _, err := d.Launch(pd.LaunchRequest{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line string
		want []pd.Event
	}{
		{`{"type":"thread.started","thread_id":"01a23268"}`, []pd.Event{{Kind: pd.EventSession, Text: "01a23268"}}},
		{`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for gpt-test not found."}}`, nil},
		{`{"type":"turn.started"}`, nil},
		{`{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"murmur","tool":"sh","arguments":{"command":"ls"},"status":"in_progress"}}`,
			[]pd.Event{{Kind: pd.EventToolCall, ToolCall: pd.ToolCall{ID: "item_1", Name: "sh", Input: `{"command":"ls"}`}}}},
		{`{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"murmur","tool":"sh","status":"completed"}}`, nil},
		{`{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"all done"}}`, []pd.Event{{Kind: pd.EventMessage, Text: "all done"}}},
		{`{"type":"error","message":"Reconnecting... 1/5"}`, nil},
		{`{"type":"turn.completed","usage":{"input_tokens":11,"cached_input_tokens":4,"output_tokens":7}}`,
			[]pd.Event{{Kind: pd.EventUsage, Usage: pd.Usage{InputTokens: 11, OutputTokens: 7}}, {Kind: pd.EventFinished, Text: "all done"}}},
		{`{"type":"turn.failed","error":{"message":"stream disconnected"}}`, []pd.Event{{Kind: pd.EventFailed, Text: "stream disconnected"}}},
	}
	for _, c := range cases {
		got, err := d.ParseLine(c.line)
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.line, got, c.want)
		}
	}
	// A new run does not answer with the last run's message.
	if _, err := d.Launch(pd.LaunchRequest{}); err != nil {
		t.Fatal(err)
	}
	got, _ := d.ParseLine(`{"type":"turn.completed"}`)
	if !slices.Equal(got, []pd.Event{{Kind: pd.EventFinished}}) {
		t.Errorf("after a new launch: %+v", got)
	}
	if _, err := d.ParseLine("{"); err == nil {
		t.Error("a line that is not JSON was read")
	}
}

func TestParseVersion(t *testing.T) {
	if v, ok := (&codex{}).ParseVersion("codex-cli 0.171.0\n"); !ok || v != "0.171.0" {
		t.Errorf("%q %v", v, ok)
	}
}
