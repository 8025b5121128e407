package conversation

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/murmur/mur/internal/trace"
)

// Lost is a command a session moved to the background whose completion no
// line of its trace records: a resume reports it as lost work.
type Lost struct {
	WorkID   string    `json:"work_id"`
	Binary   string    `json:"binary"`
	Command  string    `json:"command"`
	Detached time.Time `json:"detached"`
	Log      string    `json:"log,omitempty"`
}

// ResumePoint is what mur run --resume continues from a recorded session.
type ResumePoint struct {
	SessionID string
	Records   string
	// ContextID is the context of the session's last task.
	ContextID string
	Lost      []Lost
}

// ErrNothingToResume means a session's trace names no task context.
var ErrNothingToResume = errors.New("the session ran no task: there is no conversation to continue")

// ReadResumePoint reads a session's trace.jsonl: the context of its last
// task and every shell_detached with no shell_completed, and no
// shell_abandoned carrying an exit code, for the same work id. A last
// line cut short by a crash is left out, like a torn record line.
func ReadResumePoint(records string) (ResumePoint, error) {
	p := ResumePoint{SessionID: filepath.Base(records), Records: records}
	f, err := os.Open(filepath.Join(records, "trace.jsonl"))
	if err != nil {
		return p, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	done := map[string]bool{}
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return p, err
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		l, err := trace.ParseLine(b)
		if err != nil {
			return p, fmt.Errorf("%s line %d: %w", f.Name(), n, err)
		}
		switch l.Event {
		case "task_start":
			if c := l.String("context_id"); c != "" {
				p.ContextID = c
			}
		case "shell_detached":
			id := l.String("work_id")
			p.Lost = append(p.Lost, Lost{WorkID: id, Binary: l.String("binary"), Command: l.String("command"), Detached: l.Time, Log: l.String("log")})
		case "shell_completed":
			done[l.String("work_id")] = true
		case "shell_abandoned":
			if _, ok := l.Fields["exit_code"]; ok {
				done[l.String("work_id")] = true
			}
		}
	}
	lost := p.Lost[:0]
	for _, x := range p.Lost {
		if !done[x.WorkID] {
			lost = append(lost, x)
		}
	}
	p.Lost = lost
	if p.ContextID == "" {
		return p, ErrNothingToResume
	}
	return p, nil
}
