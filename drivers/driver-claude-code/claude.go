// Command driver-claude-code is the murmur/driver-claude-code process
// driver (transport: process): it runs Claude Code non-interactively
// (claude -p, one JSON object per stdout line) and reads its stream-json
// output. Claude Code's own CLAUDE.md loading, auto-memory, telemetry,
// error reporting and update checks are off, so the composed prompt mur
// hands in is the only project instruction it gets and a run makes no
// request but the model's; its built-in tools are off too, so the model
// has exactly the capsule's tools, reached through mur's loopback tool
// server as the MCP server "murmur". The translation is plain Go, tested
// on the host; main.go registers it in the component.
package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	pd "github.com/murmur/mur/sdk/go/processdriver"
)

type claude struct{}

// server is the name the tool server has in Claude Code's MCP
// configuration; Claude Code calls its tools mcp__<server>__<tool>.
const server = "murmur"

// tokenVar carries the tool server's token: Claude Code expands ${VAR} in
// an MCP server's headers, so the token is in no argument ps shows.
const tokenVar = "MUR_TOOL_SERVER_TOKEN"

func (claude) Describe() pd.Description {
	return pd.Description{
		Executable:     "claude",
		VersionArgs:    []string{"--version"},
		TestedVersions: []string{"2.1.332"},
		// Claude Code keeps its configuration and credentials under HOME.
		RequiredEnv:  []string{"HOME"},
		Interrupt:    pd.InterruptSignalInt,
		ReportsUsage: true,
	}
}

var versionRE = regexp.MustCompile(`\b(\d+\.\d+\.\d+)\b`)

func (claude) ParseVersion(out string) (string, bool) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// config is what the driver reads of inference.driver.config.
type config struct {
	// BaseURL is the Messages API endpoint Claude Code calls
	// (ANTHROPIC_BASE_URL).
	BaseURL string `json:"base_url"`
	// Effort is Claude Code's --effort.
	Effort string `json:"effort"`
}

func readConfig(s *string) (config, error) {
	var c config
	if s == nil {
		return c, nil
	}
	dec := json.NewDecoder(strings.NewReader(*s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("inference.driver.config: %v (this driver reads base_url and effort)", err)
	}
	return c, nil
}

// quiet turns off everything Claude Code does besides the model's
// requests (telemetry, error reports, update checks, feedback surveys)
// and its own loading of CLAUDE.md files and auto-memory.
var quiet = [][2]string{
	{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
	{"DISABLE_TELEMETRY", "1"},
	{"DISABLE_ERROR_REPORTING", "1"},
	{"DISABLE_AUTOUPDATER", "1"},
	{"CLAUDE_CODE_DISABLE_CLAUDE_MDS", "1"},
	{"CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1"},
	{"NO_COLOR", "1"},
}

func (claude) Launch(r pd.LaunchRequest) (pd.LaunchPlan, error) {
	cfg, err := readConfig(r.Config)
	if err != nil {
		return pd.LaunchPlan{}, err
	}
	// The prompt goes on stdin; --tools "" leaves no built-in tool.
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--tools", ""}
	if r.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.FormatUint(uint64(r.MaxTurns), 10))
	}
	if r.Model != nil {
		args = append(args, "--model", *r.Model)
	}
	if r.SystemPrompt != nil {
		args = append(args, "--system-prompt", *r.SystemPrompt)
	}
	if r.ResumeSession != nil {
		args = append(args, "--resume", *r.ResumeSession)
	}
	if cfg.Effort != "" {
		args = append(args, "--effort", cfg.Effort)
	}
	env := append([][2]string(nil), quiet...)
	if cfg.BaseURL != "" {
		env = append(env, [2]string{"ANTHROPIC_BASE_URL", cfg.BaseURL})
	}
	// Only the tool server: no MCP server of the user's own configuration.
	args = append(args, "--strict-mcp-config")
	if t := r.Tools; t != nil {
		mcp, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{server: map[string]any{
			"type": "http", "url": t.URL, "headers": map[string]string{"Authorization": "Bearer ${" + tokenVar + "}"},
		}}})
		allowed := make([]string, len(t.ToolNames))
		for i, n := range t.ToolNames {
			allowed[i] = "mcp__" + server + "__" + n
		}
		args = append(args, "--mcp-config", string(mcp), "--allowedTools", strings.Join(allowed, ","))
		env = append(env, [2]string{tokenVar, t.Token})
	}
	return pd.LaunchPlan{Args: args, EnvSet: env, Stdin: []byte(r.Prompt), CloseStdin: true}, nil
}

// line is what the driver reads of one stream-json line.
type line struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Message   struct {
		Content []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	} `json:"message"`
	Result  string   `json:"result"`
	IsError bool     `json:"is_error"`
	Errors  []string `json:"errors"`
	Usage   *struct {
		InputTokens         uint64 `json:"input_tokens"`
		CacheCreationTokens uint64 `json:"cache_creation_input_tokens"`
		CacheReadTokens     uint64 `json:"cache_read_input_tokens"`
		OutputTokens        uint64 `json:"output_tokens"`
	} `json:"usage"`
}

// notFound is how Claude Code reports a --resume session it does not have.
const notFound = "No conversation found with session ID"

func (claude) ParseLine(s string) ([]pd.Event, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var l line
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return nil, fmt.Errorf("claude printed a line that is not stream-json: %v", err)
	}
	switch {
	case l.Type == "system" && l.Subtype == "init" && l.SessionID != "":
		return []pd.Event{{Kind: pd.EventSession, Text: l.SessionID}}, nil
	case l.Type == "assistant":
		var ev []pd.Event
		for _, c := range l.Message.Content {
			switch c.Type {
			case "text":
				ev = append(ev, pd.Event{Kind: pd.EventMessage, Text: c.Text})
			case "tool_use":
				in := string(c.Input)
				if in == "" {
					in = "{}"
				}
				ev = append(ev, pd.Event{Kind: pd.EventToolCall, ToolCall: pd.ToolCall{ID: c.ID, Name: strings.TrimPrefix(c.Name, "mcp__"+server+"__"), Input: in}})
			}
		}
		return ev, nil
	case l.Type == "result":
		return result(l), nil
	}
	// user lines (tool results), stream events and other system lines
	// carry nothing the runtime reads.
	return nil, nil
}

// result is the run's last line. Its usage is the run's total: an
// assistant line's usage is the stream's first count, before the answer
// was written, so the whole run is charged once, here, with cache reads
// and writes counted as input the model read.
func result(l line) []pd.Event {
	var ev []pd.Event
	if u := l.Usage; u != nil {
		ev = append(ev, pd.Event{Kind: pd.EventUsage, Usage: pd.Usage{
			InputTokens: u.InputTokens + u.CacheCreationTokens + u.CacheReadTokens, OutputTokens: u.OutputTokens}})
	}
	if !l.IsError && l.Subtype == "success" {
		return append(ev, pd.Event{Kind: pd.EventFinished, Text: l.Result})
	}
	why := strings.Join(l.Errors, "; ")
	for _, e := range l.Errors {
		if strings.HasPrefix(e, notFound) {
			return append(ev, pd.Event{Kind: pd.EventSessionNotFound, Text: e})
		}
	}
	switch {
	case why == "" && l.Result != "":
		why = l.Result
	case why == "":
		why = "claude ended with " + l.Subtype
	}
	return append(ev, pd.Event{Kind: pd.EventFailed, Text: why})
}

func main() {}
