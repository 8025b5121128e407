//go:build wasip1

// Command hook-probe-go is a hook whose behaviour its capsule entry's
// config (MURMUR_ARTIFACT_CONFIG, JSON) picks, so one component serves
// every hook scenario of the session's tests:
//
//	log        file (relative to the hook's directory) to append one JSON
//	           line per event to: {"seq":n,"event":name,"data":...}; seq
//	           counts calls on this instance
//	deny_tools tool names an on-tool-call call answers err("deny: …") for
//	deny_shell binaries (base name) an on-shell call answers err for
//	reopen     feedback an on-task-end call answers reopen-task with
//	trap       handler that panics (the instance traps)
//	spin       handler that never returns (its deadline must stop it)
//	grow       handler that allocates until memory runs out
//	wrong_arm  handler that answers write-manifests, an arm no handler
//	           but on-stage honours
//	fail       handler that answers err("asked to fail")
//	read_task  handler whose log line also holds murmur:task-io/read's
//	           answer ("task", or "read_error")
//	read_conversation handler whose log line also holds the first page
//	           of murmur:conversation/read for the task in progress
//	           ("conversation", or "read_error")
//	manifests  on-stage answers write-manifests with these
//	           {binary_name, content} pairs
//	seed       on-task-start answers replace-context with these
//	           {role, content} messages: the seed of a hook whose
//	           commit_policy is seed-context; its log line holds the
//	           budget the launch set (MURMUR_SEED_BUDGET_TOKENS,
//	           MURMUR_CONTEXT_WINDOW) as "seed_env"
package main

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"strings"

	"github.com/murmur/mur/sdk/go/hook"
)

type config struct {
	Log       string              `json:"log"`
	DenyTools []string            `json:"deny_tools"`
	DenyShell []string            `json:"deny_shell"`
	Reopen    string              `json:"reopen"`
	Trap      string              `json:"trap"`
	Spin      string              `json:"spin"`
	Grow      string              `json:"grow"`
	WrongArm  string              `json:"wrong_arm"`
	Fail      string              `json:"fail"`
	ReadTask  string              `json:"read_task"`
	ReadConv  string              `json:"read_conversation"`
	Manifests []hook.ToolManifest `json:"manifests"`
	Seed      []hook.Message      `json:"seed"`
}

var (
	cfg  config
	seq  int
	sink [][]byte
)

func load() {
	if s := os.Getenv("MURMUR_ARTIFACT_CONFIG"); s != "" {
		_ = json.Unmarshal([]byte(s), &cfg)
	}
}

// handle runs the behaviours every handler shares, then the handler's own.
func handle[E any](name string, own func(E) (hook.Output, error)) func(E) (hook.Output, error) {
	return func(e E) (hook.Output, error) {
		seq++
		switch name {
		case cfg.Trap:
			panic("hook-probe: asked to trap in " + name)
		case cfg.Spin:
			for {
			}
		case cfg.Grow:
			for {
				sink = append(sink, make([]byte, 16<<20))
			}
		case cfg.Fail:
			return hook.None(), errors.New("asked to fail in " + name)
		}
		if cfg.Log != "" {
			rec := struct {
				Seq          int            `json:"seq"`
				Event        string         `json:"event"`
				Data         E              `json:"data"`
				Task         *hook.TaskText `json:"task,omitempty"`
				Conversation *hook.Page     `json:"conversation,omitempty"`
				ReadError    string         `json:"read_error,omitempty"`
				SeedEnv      []string       `json:"seed_env,omitempty"`
			}{Seq: seq, Event: name, Data: e}
			if name == "on-task-start" {
				for _, k := range []string{"MURMUR_SEED_BUDGET_TOKENS", "MURMUR_CONTEXT_WINDOW"} {
					if v, ok := os.LookupEnv(k); ok {
						rec.SeedEnv = append(rec.SeedEnv, k+"="+v)
					}
				}
			}
			if name == cfg.ReadTask {
				if t, err := hook.CurrentTask(); err != nil {
					rec.ReadError = err.Error()
				} else {
					rec.Task = &t
				}
			}
			if name == cfg.ReadConv {
				if p, err := hook.ReadConversation("", 0, 100); err != nil {
					rec.ReadError = err.Error()
				} else {
					rec.Conversation = &p
				}
			}
			line, _ := json.Marshal(rec)
			f, err := os.OpenFile(cfg.Log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return hook.None(), err
			}
			_, err = f.Write(append(line, '\n'))
			f.Close()
			if err != nil {
				return hook.None(), err
			}
		}
		if name == cfg.WrongArm {
			return hook.WriteManifests([]hook.ToolManifest{{BinaryName: "x", Content: "y"}}), nil
		}
		if own != nil {
			return own(e)
		}
		return hook.None(), nil
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func init() {
	load()
	hook.Run(hook.Handlers{
		OnStage: handle("on-stage", func(hook.StageEvent) (hook.Output, error) {
			if len(cfg.Manifests) > 0 {
				return hook.WriteManifests(cfg.Manifests), nil
			}
			return hook.None(), nil
		}),
		OnSessionStart: handle[hook.SessionContext]("on-session-start", nil),
		OnTaskStart: handle("on-task-start", func(hook.TaskStartEvent) (hook.Output, error) {
			if len(cfg.Seed) > 0 {
				return hook.ReplaceContext(cfg.Seed), nil
			}
			return hook.None(), nil
		}),
		OnInference: handle[hook.InferenceEvent]("on-inference", nil),
		OnToolCall: handle("on-tool-call", func(e hook.ToolEvent) (hook.Output, error) {
			if contains(cfg.DenyTools, e.ToolName) {
				return hook.None(), errors.New("deny: the tool " + e.ToolName + " is not allowed by hook-probe")
			}
			return hook.None(), nil
		}),
		OnShell: handle("on-shell", func(e hook.ShellEvent) (hook.Output, error) {
			if contains(cfg.DenyShell, path.Base(e.Binary)) || contains(cfg.DenyShell, strings.Fields(e.Command + " x")[0]) {
				return hook.None(), errors.New("deny: " + path.Base(e.Binary) + " is not allowed by hook-probe")
			}
			return hook.None(), nil
		}),
		OnCompaction: handle[hook.CompactionEvent]("on-compaction", nil),
		OnTaskEnd: handle("on-task-end", func(e hook.TaskEndEvent) (hook.Output, error) {
			if cfg.Reopen != "" {
				return hook.ReopenTask(cfg.Reopen), nil
			}
			return hook.None(), nil
		}),
		OnSessionEnd: handle[hook.SessionEndEvent]("on-session-end", nil),
	})
}

func main() {}
