//go:build wasip1

// Command hook-log-go is a hook that logs every lifecycle event, one JSON
// object per line on stderr, and commits nothing. It is the fixture for
// the host's hook round trips: every handler, on-task-start and
// on-task-end included, is exported.
package main

import (
	"encoding/json"
	"os"

	"github.com/murmur/mur/sdk/go/hook"
)

// logEvent writes {"event": name, "data": e} and answers none.
func logEvent[E any](name string) func(E) (hook.Output, error) {
	return func(e E) (hook.Output, error) {
		line, err := json.Marshal(struct {
			Event string `json:"event"`
			Data  E      `json:"data"`
		}{name, e})
		if err != nil {
			return hook.None(), err
		}
		_, err = os.Stderr.Write(append(line, '\n'))
		return hook.None(), err
	}
}

func init() {
	hook.Run(hook.Handlers{
		OnStage:        logEvent[hook.StageEvent]("on-stage"),
		OnSessionStart: logEvent[hook.SessionContext]("on-session-start"),
		OnTaskStart:    logEvent[hook.TaskStartEvent]("on-task-start"),
		OnInference:    logEvent[hook.InferenceEvent]("on-inference"),
		OnToolCall:     logEvent[hook.ToolEvent]("on-tool-call"),
		OnShell:        logEvent[hook.ShellEvent]("on-shell"),
		OnCompaction:   logEvent[hook.CompactionEvent]("on-compaction"),
		OnTaskEnd:      logEvent[hook.TaskEndEvent]("on-task-end"),
		OnSessionEnd:   logEvent[hook.SessionEndEvent]("on-session-end"),
	})
}

func main() {}
