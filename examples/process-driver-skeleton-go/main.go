//go:build wasip1

// Command process-driver-skeleton-go is the shape of a process driver
// (transport: process): it drives a harness CLI, here a generic one named
// "harness" that takes its prompt on stdin and prints one JSON object per
// line. A driver for a real harness keeps this structure and changes the
// flags and the line format.
package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	pd "github.com/murmur/mur/sdk/go/processdriver"
)

type harness struct{}

func init() { pd.Run(harness{}) }

func (harness) Describe() pd.Description {
	return pd.Description{
		Executable:     "harness",
		VersionArgs:    []string{"--version"},
		TestedVersions: []string{"1.2.3"},
		RequiredEnv:    []string{"HOME"},
		Interrupt:      pd.InterruptSignalInt,
		ReportsUsage:   true,
	}
}

var versionRE = regexp.MustCompile(`\b(\d+\.\d+\.\d+)\b`)

func (harness) ParseVersion(out string) (string, bool) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func (harness) Launch(r pd.LaunchRequest) (pd.LaunchPlan, error) {
	args := []string{"--output", "jsonl", "--max-turns", strconv.FormatUint(uint64(r.MaxTurns), 10)}
	if r.Model != nil {
		args = append(args, "--model", *r.Model)
	}
	if r.SystemPrompt != nil {
		args = append(args, "--system", *r.SystemPrompt)
	}
	if r.ResumeSession != nil {
		args = append(args, "--resume", *r.ResumeSession)
	}
	if r.Config != nil {
		var cfg struct {
			Effort string `json:"effort"`
		}
		if err := json.Unmarshal([]byte(*r.Config), &cfg); err != nil {
			return pd.LaunchPlan{}, fmt.Errorf("inference.driver.config: %w", err)
		}
		if cfg.Effort != "" {
			args = append(args, "--effort", cfg.Effort)
		}
	}
	env := [][2]string{{"NO_COLOR", "1"}}
	if r.Tools != nil {
		args = append(args, "--mcp", r.Tools.URL, "--tools", strings.Join(r.Tools.ToolNames, ","))
		// The token goes by environment, not argv, where ps would show it.
		env = append(env, [2]string{"HARNESS_MCP_TOKEN", r.Tools.Token})
	}
	return pd.LaunchPlan{Args: args, EnvSet: env, Stdin: []byte(r.Prompt), CloseStdin: true}, nil
}

type line struct {
	Type         string          `json:"type"`
	ID           string          `json:"id"`
	Text         string          `json:"text"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	InputTokens  uint64          `json:"input_tokens"`
	OutputTokens uint64          `json:"output_tokens"`
	Code         string          `json:"code"`
	Message      string          `json:"message"`
}

func (harness) ParseLine(s string) ([]pd.Event, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var l line
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return nil, fmt.Errorf("harness printed a line that is not JSON: %w", err)
	}
	switch l.Type {
	case "session":
		return []pd.Event{{Kind: pd.EventSession, Text: l.ID}}, nil
	case "text":
		return []pd.Event{{Kind: pd.EventMessage, Text: l.Text}}, nil
	case "tool_use":
		return []pd.Event{{Kind: pd.EventToolCall, ToolCall: pd.ToolCall{ID: l.ID, Name: l.Name, Input: string(l.Input)}}}, nil
	case "usage":
		return []pd.Event{{Kind: pd.EventUsage, Usage: pd.Usage{InputTokens: l.InputTokens, OutputTokens: l.OutputTokens}}}, nil
	case "result":
		return []pd.Event{{Kind: pd.EventFinished, Text: l.Text}}, nil
	case "error":
		if l.Code == "session_not_found" {
			return []pd.Event{{Kind: pd.EventSessionNotFound, Text: l.Message}}, nil
		}
		return []pd.Event{{Kind: pd.EventFailed, Text: l.Message}}, nil
	}
	// Lines of other types (progress, debug) carry nothing the runtime
	// reads.
	return nil, nil
}

func main() {}
