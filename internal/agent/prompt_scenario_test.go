package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/trace"
)

func TestSystemPromptSources(t *testing.T) {
	override := "Override prompt."
	tests := []struct {
		name     string
		edit     func(r *run)
		anth     any // the Anthropic "system" the provider receives; nil: absent
		exit     int
		stderrIn string
	}{
		{"none sends no system", func(r *run) {}, nil, 0, ""},
		{"inline", func(r *run) { r.opts.Capsule.Inference.SystemPrompt = ptr("Be terse.") }, "Be terse.", 0, ""},
		{"file verbatim", func(r *run) {
			os.WriteFile(filepath.Join(r.opts.ManifestDir, "conv.md"), []byte("  From file.\n\n"), 0o600)
			r.opts.Capsule.Inference.SystemPromptFile = "conv.md"
		}, "  From file.\n\n", 0, ""},
		{"artifact", func(r *run) {
			r.opts.Capsule.Inference.SystemPromptArtifact, r.opts.SkillText = "local/persona", "Persona."
		}, "Persona.", 0, ""},
		{"--system-prompt replaces", func(r *run) {
			r.opts.Capsule.Inference.SystemPrompt = ptr("Be terse.")
			r.opts.SystemPrompt = &override
		}, "Override prompt.", 0, ""},
		{"missing file E-RUN-009", func(r *run) { r.opts.Capsule.Inference.SystemPromptFile = "nope.md" }, nil, 2, "E-RUN-009"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRun(t, providertest.Anthropic, providertest.Step{Text: "ok"})
			tt.edit(r)
			r.launch()
			r.wantCode(tt.exit)
			if tt.stderrIn != "" {
				r.wantStderr(tt.stderrIn)
				if len(r.srv.Requests()) != 0 || r.dirs.ID != "" {
					t.Fatal("E-RUN-009 after a session or an API call")
				}
				return
			}
			got, has := r.srv.Requests()[0].Body["system"]
			if tt.anth == nil && has || tt.anth != nil && got != tt.anth {
				t.Fatalf("system = %#v (present %v)", got, has)
			}
		})
	}
}

func TestInstructionFilesReachPrompt(t *testing.T) {
	r := newRun(t, providertest.OpenAI, providertest.Step{Text: "ok"})
	r.opts.Capsule.Inference.SystemPrompt = ptr("You review.")
	r.opts.Capsule.Inference.InstructionFiles = []string{"AGENTS.md", "./CLAUDE.md", "missing.md"}
	wd := t.TempDir()
	r.opts.Workdir = wd
	os.WriteFile(filepath.Join(wd, "AGENTS.md"), []byte("Use tabs.\n\n"), 0o600)
	os.Symlink("AGENTS.md", filepath.Join(wd, "CLAUDE.md"))
	os.MkdirAll(filepath.Join(wd, "sub"), 0o700)
	os.WriteFile(filepath.Join(wd, "sub", "AGENTS.md"), []byte("nested"), 0o600)
	r.launch()
	r.wantCode(0)
	var body struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	json.Unmarshal(r.srv.Requests()[0].Raw, &body)
	want := "You review.\n\n[Instruction file: AGENTS.md (also listed as CLAUDE.md)]\nUse tabs."
	if body.Messages[0].Role != "system" || body.Messages[0].Content != want {
		t.Fatalf("system message %q", body.Messages[0].Content)
	}
	var files []agent.InstructionFile
	ss := r.lines("session_start")[0]
	if _, err := ss.Get("instruction_files", &files); err != nil || len(files) != 3 {
		t.Fatalf("instruction_files %v %v", files, err)
	}
	if files[0].Status != "read" || files[1].Status != "same_file" || files[2].Status != "missing" || files[0].BytesIncluded != 11 {
		t.Fatalf("statuses %+v", files)
	}
	md, _ := os.ReadFile(filepath.Join(r.dirs.Runtime(), "MURMUR.md"))
	if !strings.Contains(string(md), "## Instruction Files") || !strings.Contains(string(md), "- sub/AGENTS.md") {
		t.Fatalf("MURMUR.md %s", md)
	}
}

func TestCaptureLevels(t *testing.T) {
	for _, level := range []trace.Capture{trace.CaptureNone, trace.CaptureMeta, trace.CaptureContent} {
		t.Run(string(level), func(t *testing.T) {
			r := newRun(t, providertest.Anthropic,
				providertest.Step{Calls: []providertest.Call{writeCall("c1", "f", "data")}},
				providertest.Step{Text: "ok"})
			r.opts.Capsule.Trace.Capture = string(level)
			r.opts.Capsule.Inference.SystemPrompt = ptr("Sys.")
			r.launch()
			r.wantCode(0)
			inf := r.lines("inference")[1]
			_, hasSys := inf.Fields["system_sha"]
			_, hasMsgs := inf.Fields["message_shas"]
			_, hasResp := inf.Fields["response_sha"]
			hashes := level != trace.CaptureNone
			if hasSys != hashes || hasMsgs != hashes || hasResp != hashes {
				t.Fatalf("hashes present %v %v %v", hasSys, hasMsgs, hasResp)
			}
			_, hasOut := r.lines("tool_call")[0].Fields["output"]
			if hasOut != (level == trace.CaptureContent) {
				t.Fatalf("tool_call.output present %v", hasOut)
			}
			blobs, _ := os.ReadDir(r.dirs.Blobs())
			if (len(blobs) > 0) != (level == trace.CaptureContent) {
				t.Fatalf("%d blobs", len(blobs))
			}
			if level == trace.CaptureContent {
				var shas []string
				inf.Get("message_shas", &shas)
				for _, s := range append(shas, inf.String("system_sha"), inf.String("tools_sha"), inf.String("response_sha")) {
					if _, err := os.Stat(filepath.Join(r.dirs.Blobs(), s)); err != nil {
						t.Fatalf("blob %s: %v", s, err)
					}
				}
				b, _ := os.ReadFile(filepath.Join(r.dirs.Blobs(), inf.String("system_sha")))
				if string(b) != "Sys." {
					t.Fatalf("system blob %q", b)
				}
			}
		})
	}
}

func TestKeepWorking(t *testing.T) {
	r := newRun(t, providertest.Anthropic,
		providertest.Step{Text: "first"}, providertest.Step{Text: "second"}, providertest.Step{Text: "third"})
	r.opts.Capsule.Lifecycle.KeepWorking = &manifest.KeepWorking{Message: "Keep going. Check your work.", Limit: 2}
	r.launch()
	r.wantCode(0)
	if len(r.srv.Requests()) != 3 || r.result() != "third" {
		t.Fatalf("%d requests, result %q", len(r.srv.Requests()), r.result())
	}
	if !strings.Contains(requestText(r.srv.Requests()[2]), "Keep going. Check your work.") {
		t.Fatal("keep_working message not sent")
	}
	var kw map[string]int
	r.lines("task_end")[0].Get("keep_working", &kw)
	if kw["continuations"] != 2 {
		t.Fatalf("keep_working %v", kw)
	}
}

func TestDoneCheckReopens(t *testing.T) {
	r := newRun(t, providertest.Anthropic,
		providertest.Step{Text: "done"},
		providertest.Step{Calls: []providertest.Call{writeCall("c1", "done.txt", "yes")}},
		providertest.Step{Text: "now done"})
	r.opts.Runner = execRunner{}
	r.opts.Capsule.Lifecycle.DoneCheck = &manifest.DoneCheck{Command: `sh -c 'test -f done.txt || { echo "done.txt is missing"; exit 3; }'`, Limit: 2, TimeoutSecs: ptr[int64](manifest.DefaultDoneCheckTimeoutSecs)}
	r.launch()
	r.wantCode(0)
	second := requestText(r.srv.Requests()[1])
	if !strings.Contains(second, "failed with exit code 3") || !strings.Contains(second, "done.txt is missing") {
		t.Fatalf("reopen feedback: %s", second)
	}
	runs := r.lines("done_check")
	if len(runs) != 2 || runs[0].Int("exit_code") != 3 || !strings.Contains(string(runs[1].Fields["met"]), "true") {
		t.Fatalf("done_check lines %v", runs)
	}
	var dc map[string]any
	r.lines("task_end")[0].Get("done_check", &dc)
	if dc["met"] != true || dc["reopens"].(float64) != 1 {
		t.Fatalf("task_end.done_check %v", dc)
	}
}

func TestDoneCheckLimitZeroRecordsOnly(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "answer"})
	r.opts.Runner = execRunner{}
	r.opts.Capsule.Lifecycle.DoneCheck = &manifest.DoneCheck{Command: "false", Limit: 0, TimeoutSecs: ptr[int64](manifest.DefaultDoneCheckTimeoutSecs)}
	r.launch()
	r.wantCode(0)
	var dc map[string]any
	r.lines("task_end")[0].Get("done_check", &dc)
	if dc["met"] != false || r.result() != "answer" {
		t.Fatalf("done_check %v result %q", dc, r.result())
	}
}

func TestDeadlineNotice(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "wrapping up"})
	r.opts.Deadline = 5 * time.Second                            // notice: a tenth, 1 s at least, so not yet
	r.opts.Capsule.Lifecycle.DeadlineNoticeSecs = ptr[int64](10) // 10 s before a 5 s deadline: now
	r.launch()
	r.wantCode(0)
	if !strings.Contains(requestText(r.srv.Requests()[0]), "This session ends at") {
		t.Fatal("no deadline notice")
	}
	if len(r.lines("deadline_notice")) != 1 {
		t.Fatal("no deadline_notice line")
	}
}

func TestDeadlineEndsTask(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "late", Delay: 5 * time.Second})
	r.opts.Deadline = 300 * time.Millisecond
	r.launch()
	r.wantCode(1)
	r.wantStderr("status: deadline")
}

func TestNoTaskEndsWithoutCallingTheModel(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "never"})
	r.opts.LaunchTask = ""
	r.launch()
	r.wantCode(0)
	r.wantStderr("no task")
	if len(r.srv.Requests()) != 0 {
		t.Fatal("model called with no task")
	}
}

func TestTaskFromWorkdirFile(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "ok"})
	r.opts.LaunchTask = ""
	r.opts.Workdir = t.TempDir()
	os.WriteFile(filepath.Join(r.opts.Workdir, "task.md"), []byte("from task.md"), 0o600)
	r.launch()
	r.wantCode(0)
	if !strings.Contains(requestText(r.srv.Requests()[0]), "from task.md") {
		t.Fatal("task.md not used")
	}
	if s := r.lines("session_start")[0].String("task_source"); s != string(session.TaskMD) {
		t.Fatalf("task_source %q", s)
	}
}

func TestCancelDuringToolEndsCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := newRun(t, providertest.Anthropic, providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "block"}}})
	r.opts.Tools = append(r.opts.Tools, blockTool{cancel: cancel})
	code, err := r.launchCtx(ctx)
	if err != nil || code != capsule.ExitCanceled {
		t.Fatalf("code %d err %v", code, err)
	}
	end := r.lines("task_end")[0]
	if end.String("exit_status") != "canceled" || end.String("phase") != "tool" {
		t.Fatalf("task_end %v", end.Fields)
	}
}

// blockTool cancels the launch while it runs and waits for the cancel.
type blockTool struct{ cancel func() }

func (blockTool) Def() agent.ToolDef {
	return agent.ToolDef{Name: "block", Description: "blocks", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (b blockTool) Call(ctx context.Context, _ json.RawMessage) (agent.Result, error) {
	b.cancel()
	<-ctx.Done()
	return agent.Result{}, ctx.Err()
}

func TestDoneCheckTimeoutReopens(t *testing.T) {
	oneSecond := int64(1)
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "first"}, providertest.Step{Text: "second"})
	r.opts.Runner = execRunner{}
	r.opts.Capsule.Lifecycle.DoneCheck = &manifest.DoneCheck{Command: "sleep 5", Limit: 1, TimeoutSecs: &oneSecond}
	r.launch()
	r.wantCode(0)
	if !strings.Contains(requestText(r.srv.Requests()[1]), "was killed after 1s") {
		t.Fatalf("feedback %s", r.srv.Requests()[1].Raw)
	}
	var dc map[string]any
	r.lines("task_end")[0].Get("done_check", &dc)
	if dc["met"] != false || dc["runs"].(float64) != 2 {
		t.Fatalf("done_check %v", dc)
	}
}

func TestDoneCheckNeedsAContainedRunner(t *testing.T) {
	r := newRun(t, providertest.Anthropic, providertest.Step{Text: "x"})
	r.opts.Capsule.Lifecycle.DoneCheck = &manifest.DoneCheck{Command: "true", Limit: 1, TimeoutSecs: ptr[int64](manifest.DefaultDoneCheckTimeoutSecs)}
	code, err := r.launchCtx(context.Background())
	if code != capsule.ExitRefused || err == nil || r.dirs.ID != "" {
		t.Fatalf("code %d err %v", code, err)
	}
}

func TestBoundSkillIsNotOffered(t *testing.T) {
	override := "Own prompt."
	for _, tt := range []struct {
		name     string
		override *string
		offered  bool
	}{{"bound", nil, false}, {"released by --system-prompt", &override, true}} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRun(t, providertest.Anthropic, providertest.Step{Text: "ok"})
			r.opts.Tools = append(r.opts.Tools, agent.NewSkill("persona", "A persona.", "You are Ada."))
			r.opts.Capsule.Inference.SystemPromptArtifact, r.opts.SkillText = "local/persona", "You are Ada."
			r.opts.SystemPrompt = tt.override
			r.launch()
			r.wantCode(0)
			raw := requestText(r.srv.Requests()[0])
			if got := strings.Contains(raw, `"name":"persona"`); got != tt.offered {
				t.Fatalf("persona offered = %v: %s", got, raw)
			}
			md, _ := os.ReadFile(filepath.Join(r.dirs.Runtime(), "MURMUR.md"))
			if strings.Contains(string(md), "bound as your system prompt") == tt.offered {
				t.Fatalf("MURMUR.md: %s", md)
			}
		})
	}
}

// TestSessionEndedWithCauseFails: a session ended for a reason of its own
// (the sandbox's workdir ceiling) fails the task with that code and
// reason, not as a cancel.
func TestSessionEndedWithCauseFails(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	r := newRun(t, providertest.Anthropic, providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "block"}}})
	ceiling := diag.New(diag.RunWorkdirSize, diag.Pos{}, "capabilities.resources.workdir_max_bytes", "the work folder passed its size ceiling")
	r.opts.Tools = append(r.opts.Tools, blockTool{cancel: func() { cancel(ceiling) }})
	code, err := r.launchCtx(ctx)
	if err != nil || code != capsule.ExitTask {
		t.Fatalf("code %d err %v", code, err)
	}
	end := r.lines("task_end")[0]
	if end.String("exit_status") != "failed" {
		t.Fatalf("task_end %v", end.Fields)
	}
	if !strings.Contains(r.stderr.String(), "E-RUN-013") || !strings.Contains(r.stderr.String(), "size ceiling") {
		t.Fatalf("status line does not carry the cause: %s", r.stderr.String())
	}
}
