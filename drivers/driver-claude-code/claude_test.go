package main

import (
	"slices"
	"strings"
	"testing"

	pd "github.com/murmur/mur/sdk/go/processdriver"
)

func str(s string) *string { return &s }

func TestLaunchQuietNoBuiltinsPromptOnStdin(t *testing.T) {
	plan, err := claude{}.Launch(pd.LaunchRequest{
		Prompt: "do it", SystemPrompt: str("be brief"), Model: str("claude-x"), Config: str(`{"base_url":"http://127.0.0.1:9"}`),
		ResumeSession: str("sess-1"), MaxTurns: 7,
		Tools: &pd.ToolServer{URL: "http://127.0.0.1:5/mcp", Token: "tok", ToolNames: []string{"a", "sh"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(plan.Args, "\x00")
	for _, want := range [][]string{
		{"-p", "--output-format", "stream-json", "--verbose", "--tools", ""},
		{"--max-turns", "7"}, {"--model", "claude-x"}, {"--system-prompt", "be brief"}, {"--resume", "sess-1"},
		{"--strict-mcp-config"}, {"--allowedTools", "mcp__murmur__a,mcp__murmur__sh"},
	} {
		if !strings.Contains(args, strings.Join(want, "\x00")) {
			t.Errorf("args %q lack %q", plan.Args, want)
		}
	}
	if strings.Contains(args, "tok") {
		t.Errorf("the token is in argv: %q", plan.Args)
	}
	i := slices.Index(plan.Args, "--mcp-config")
	if i < 0 || !strings.Contains(plan.Args[i+1], `"Authorization":"Bearer ${MUR_TOOL_SERVER_TOKEN}"`) || !strings.Contains(plan.Args[i+1], `"url":"http://127.0.0.1:5/mcp"`) {
		t.Errorf("mcp config: %q", plan.Args)
	}
	for _, kv := range [][2]string{{"CLAUDE_CODE_DISABLE_CLAUDE_MDS", "1"}, {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
		{"DISABLE_AUTOUPDATER", "1"}, {"ANTHROPIC_BASE_URL", "http://127.0.0.1:9"}, {"MUR_TOOL_SERVER_TOKEN", "tok"}} {
		if !slices.Contains(plan.EnvSet, kv) {
			t.Errorf("env-set %q lacks %q", plan.EnvSet, kv)
		}
	}
	if string(plan.Stdin) != "do it" || !plan.CloseStdin {
		t.Errorf("stdin %q close %v", plan.Stdin, plan.CloseStdin)
	}
}

func TestLaunchWithoutToolsHasNoServer(t *testing.T) {
	plan, err := claude{}.Launch(pd.LaunchRequest{Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(plan.Args, "--mcp-config") || slices.Contains(plan.Args, "--max-turns") || slices.Contains(plan.Args, "--model") {
		t.Errorf("args %q", plan.Args)
	}
}

func TestLaunchRefusesUnknownConfig(t *testing.T) {
	_, err := claude{}.Launch(pd.LaunchRequest{Config: str(`{"base_ur":"x"}`)})
	if err == nil || !strings.Contains(err.Error(), "inference.driver.config") {
		t.Fatalf("err = %v", err)
	}
}

// Lines as Claude Code 2.1.332 prints them (trimmed of fields the driver
// does not read).
func TestParseLines(t *testing.T) {
	d := claude{}
	cases := []struct {
		line string
		want []pd.Event
	}{
		{`{"type":"system","subtype":"init","cwd":"/w","session_id":"9273e652","tools":[]}`, []pd.Event{{Kind: pd.EventSession, Text: "9273e652"}}},
		{`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"toolu_1","name":"mcp__murmur__sh","input":{"command":"ls"}}],"usage":{"input_tokens":11,"output_tokens":1}}}`,
			[]pd.Event{{Kind: pd.EventMessage, Text: "hi"}, {Kind: pd.EventToolCall, ToolCall: pd.ToolCall{ID: "toolu_1", Name: "sh", Input: `{"command":"ls"}`}}}},
		{`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}`, nil},
		{`{"type":"result","subtype":"success","is_error":false,"result":"done","usage":{"input_tokens":11,"cache_creation_input_tokens":2,"cache_read_input_tokens":3,"output_tokens":7}}`,
			[]pd.Event{{Kind: pd.EventUsage, Usage: pd.Usage{InputTokens: 16, OutputTokens: 7}}, {Kind: pd.EventFinished, Text: "done"}}},
		{`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["No conversation found with session ID: 0b7a"],"usage":{"input_tokens":0,"output_tokens":0}}`,
			[]pd.Event{{Kind: pd.EventUsage}, {Kind: pd.EventSessionNotFound, Text: "No conversation found with session ID: 0b7a"}}},
		{`{"type":"result","subtype":"error_max_turns","is_error":true}`, []pd.Event{{Kind: pd.EventFailed, Text: "claude ended with error_max_turns"}}},
		{``, nil},
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
	if _, err := d.ParseLine("not json"); err == nil {
		t.Error("a line that is not JSON was read")
	}
}

func TestParseVersion(t *testing.T) {
	if v, ok := (claude{}).ParseVersion("2.1.332 (Claude Code)\n"); !ok || v != "2.1.332" {
		t.Errorf("%q %v", v, ok)
	}
	if !slices.Contains(claude{}.Describe().TestedVersions, "2.1.332") {
		t.Error("the pinned version is not among the tested")
	}
}
