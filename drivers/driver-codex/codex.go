// Command driver-codex is the murmur/driver-codex process driver
// (transport: process): it runs the Codex CLI non-interactively (codex
// exec --json, one JSON event per stdout line) and reads its events.
// Codex's own AGENTS.md loading is off (project_doc_max_bytes=0) and the
// composed prompt mur hands in replaces Codex's instructions; its
// built-in tools (shell, exec, images, web search, goals, sub-agents) are
// off, so the model has exactly the capsule's tools, reached through mur's
// loopback tool server as the MCP server "murmur". The translation is
// plain Go, tested on the host; main.go registers it in the component.
package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	pd "github.com/murmur/mur/sdk/go/processdriver"
)

// codex keeps the last message of the run in progress: Codex's
// turn.completed carries the usage but not the answer, which is the last
// agent_message before it. Runs are one at a time per driver instance
// (a session runs its tasks in turn), and Launch starts each afresh.
type codex struct{ last string }

const server = "murmur"

// tokenVar carries the tool server's token; Codex reads a bearer token
// from the variable bearer_token_env_var names, so it is in no argument.
const tokenVar = "MUR_TOOL_SERVER_TOKEN"

// provider is the name of the model provider a base_url defines.
const provider = "murmur-base-url"

func (*codex) Describe() pd.Description {
	return pd.Description{
		Executable:     "codex",
		VersionArgs:    []string{"--version"},
		TestedVersions: []string{"0.171.0"},
		// Codex keeps its configuration, credentials and sessions under
		// HOME (~/.codex).
		RequiredEnv:  []string{"HOME"},
		Interrupt:    pd.InterruptSignalInt,
		ReportsUsage: true,
	}
}

var versionRE = regexp.MustCompile(`\b(\d+\.\d+\.\d+)\b`)

func (*codex) ParseVersion(out string) (string, bool) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", false
	}
	return m[1], true
}

type config struct {
	// BaseURL is a Responses API endpoint (…/v1): Codex calls it as a
	// model provider of its own with no credential of Codex's.
	BaseURL string `json:"base_url"`
	// Effort is Codex's model_reasoning_effort.
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

// toml quotes s as a TOML basic string (JSON's escapes are TOML's).
func toml(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// builtins are the Codex features that give the model tools of Codex's
// own, which would run outside mur's grants and records.
var builtins = []string{"shell_tool", "unified_exec", "view_image", "image_generation", "goals", "multi_agent", "apps", "plugins", "in_app_updates"}

func (c *codex) Launch(r pd.LaunchRequest) (pd.LaunchPlan, error) {
	cfg, err := readConfig(r.Config)
	if err != nil {
		return pd.LaunchPlan{}, err
	}
	c.last = ""
	args := []string{"exec", "--json", "--skip-git-repo-check", "--color", "never",
		"-c", "project_doc_max_bytes=0", "-c", `web_search="disabled"`, "-c", `approval_policy="never"`,
		"-c", "analytics.enabled=false"}
	for _, f := range builtins {
		args = append(args, "--disable", f)
	}
	if r.Model != nil {
		args = append(args, "-m", *r.Model)
	}
	if r.SystemPrompt != nil {
		args = append(args, "-c", "instructions="+toml(*r.SystemPrompt))
	}
	if cfg.Effort != "" {
		args = append(args, "-c", "model_reasoning_effort="+toml(cfg.Effort))
	}
	if cfg.BaseURL != "" {
		args = append(args, "-c", "model_provider="+toml(provider),
			"-c", "model_providers."+provider+"={name="+toml(provider)+",base_url="+toml(cfg.BaseURL)+`,wire_api="responses"}`)
	}
	var env [][2]string
	env = append(env, [2]string{"NO_COLOR", "1"})
	if t := r.Tools; t != nil {
		names := make([]string, len(t.ToolNames))
		for i, n := range t.ToolNames {
			names[i] = toml(n)
		}
		args = append(args, "-c", "mcp_servers."+server+".url="+toml(t.URL),
			"-c", "mcp_servers."+server+".bearer_token_env_var="+toml(tokenVar),
			"-c", "mcp_servers."+server+".enabled_tools=["+strings.Join(names, ",")+"]",
			"-c", "mcp_servers."+server+`.default_tools_approval_mode="approve"`)
		env = append(env, [2]string{tokenVar, t.Token})
	}
	if r.ResumeSession != nil {
		args = append(args, "resume", *r.ResumeSession)
	}
	// "-" reads the prompt from stdin.
	args = append(args, "-")
	return pd.LaunchPlan{Args: args, EnvSet: env, Stdin: []byte(r.Prompt), CloseStdin: true}, nil
}

type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Item     struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Server    string          `json:"server"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"item"`
	Usage *struct {
		InputTokens  uint64 `json:"input_tokens"`
		OutputTokens uint64 `json:"output_tokens"`
	} `json:"usage"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (c *codex) ParseLine(s string) ([]pd.Event, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var e event
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		return nil, fmt.Errorf("codex printed a line that is not a JSON event: %v", err)
	}
	switch e.Type {
	case "thread.started":
		return []pd.Event{{Kind: pd.EventSession, Text: e.ThreadID}}, nil
	case "item.started":
		if e.Item.Type == "mcp_tool_call" {
			in := string(e.Item.Arguments)
			if in == "" || in == "null" {
				in = "{}"
			}
			return []pd.Event{{Kind: pd.EventToolCall, ToolCall: pd.ToolCall{ID: e.Item.ID, Name: e.Item.Tool, Input: in}}}, nil
		}
	case "item.completed":
		if e.Item.Type == "agent_message" {
			c.last = e.Item.Text
			return []pd.Event{{Kind: pd.EventMessage, Text: e.Item.Text}}, nil
		}
	case "turn.completed":
		var ev []pd.Event
		if u := e.Usage; u != nil {
			// Codex's input_tokens includes the cached ones.
			ev = append(ev, pd.Event{Kind: pd.EventUsage, Usage: pd.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}})
		}
		return append(ev, pd.Event{Kind: pd.EventFinished, Text: c.last}), nil
	case "turn.failed":
		why := e.Error.Message
		if why == "" {
			why = "codex reported the turn failed"
		}
		return []pd.Event{{Kind: pd.EventFailed, Text: why}}, nil
	}
	// Reasoning, errors codex retries past, other items: nothing the
	// runtime reads.
	return nil, nil
}

func main() {}
