//go:build wasip1

// Command hook-debug is murmur/hook-debug, the reference debugging hook:
// every lifecycle event it is sent is appended to hook-debug.jsonl in its
// current directory as {"seq","event","data"}, and it answers none. Its
// directory is what the capsule entry grants: filesystem.records: true
// makes it the records directory's hooks/, beside trace.jsonl. With no
// directory granted every write fails, and each failure is the call's
// error, in logs/hook-murmur-hook-debug.log.
package main

import (
	"encoding/json"
	"errors"
	"os"

	"github.com/murmur/mur/sdk/go/hook"
)

// File is where the events go, relative to the hook's directory.
const File = "hook-debug.jsonl"

var seq int

// record appends {"seq", "event", "data"} for one event.
func record[E any](name string) func(E) (hook.Output, error) {
	return func(e E) (hook.Output, error) {
		seq++
		line, err := json.Marshal(struct {
			Seq   int    `json:"seq"`
			Event string `json:"event"`
			Data  E      `json:"data"`
		}{seq, name, e})
		if err != nil {
			return hook.None(), err
		}
		f, err := os.OpenFile(File, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return hook.None(), err
		}
		_, err = f.Write(append(line, '\n'))
		return hook.None(), errors.Join(err, f.Close())
	}
}

func init() {
	hook.Run(hook.Handlers{
		OnStage:        record[hook.StageEvent]("on-stage"),
		OnSessionStart: record[hook.SessionContext]("on-session-start"),
		OnTaskStart:    record[hook.TaskStartEvent]("on-task-start"),
		OnInference:    record[hook.InferenceEvent]("on-inference"),
		OnToolCall:     record[hook.ToolEvent]("on-tool-call"),
		OnShell:        record[hook.ShellEvent]("on-shell"),
		OnCompaction:   record[hook.CompactionEvent]("on-compaction"),
		OnTaskEnd:      record[hook.TaskEndEvent]("on-task-end"),
		OnSessionEnd:   record[hook.SessionEndEvent]("on-session-end"),
	})
}

func main() {}
