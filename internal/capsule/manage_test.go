package capsule_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/wasm/cm"
)

// TestScriptCapsuleManagePull: a script capsule pulls a skill through
// murmur:artifact-manager/manage@0.1.0's pull, invokes it in the same run
// (a pulled artifact joins the dispatch allowlist at once), and a pull its
// capabilities.install does not admit answers err with E-RUN-905,
// installing nothing.
func TestScriptCapsuleManagePull(t *testing.T) {
	root, home := scriptHome(t)
	text, err := os.ReadFile(filepath.Join("testdata", "script-pull.wat"))
	if err != nil {
		t.Fatal(err)
	}
	const pull, call, deny = "murmur/style-guide", "style-guide", "other/thing"
	wasm, err := cm.Wat2Wasm(strings.NewReplacer("%PULL%", pull, "%CALL%", call, "%DENY%", deny,
		"%PULLLEN%", strconv.Itoa(len(pull)), "%CALLLEN%", strconv.Itoa(len(call)), "%DENYLEN%", strconv.Itoa(len(deny))).Replace(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	own := "name: puller\nversion: \"0.1.0\"\ndescription: Pulls a skill.\nruntime: capsule\nrequires_files: [puller.wasm]\n"
	publishDir(t, root, "puller", map[string][]byte{"puller.wasm": wasm, "murmur.yaml": []byte(own)})
	publishDir(t, root, "style-guide", map[string][]byte{"skill.md": []byte("---\nname: style-guide\nversion: 1.0.0\ndescription: House style.\n---\n# Style\nWrite plainly.\n")})
	manifestPath := installManifest(t, root, `name: scripted
version: "0.1.0"
artifacts:
  - name: murmur/puller
    version: "0.1.0"
    runtime: capsule
capabilities:
  install:
    skill: ["murmur/style-*"]
`, "")
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath}, nil, &stdout, &stderr)
	out, lines := stdout.String()+stderr.String(), trace(t, home)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	inst := eventsOf(lines, "artifact_install")
	if len(inst) != 2 || inst[0]["status"] != "installed" || inst[0]["by"] != "script" || inst[1]["status"] != "refused" || inst[1]["code"] != "E-RUN-905" {
		t.Fatalf("artifact_install lines = %v", inst)
	}
	calls := eventsOf(lines, "tool_call")
	if len(calls) != 1 || calls[0]["tool"] != call || calls[0]["status"] != "passed" {
		t.Fatalf("tool_call lines = %v", calls)
	}
	lock, err := artifact.LoadLock(filepath.Join(filepath.Dir(manifestPath), artifact.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if pin, ok := lock.Find(pull); !ok || pin.Origin != artifact.OriginRuntime {
		t.Fatalf("pin = %+v, %v", pin, ok)
	}
	if _, ok := lock.Find(deny); ok {
		t.Fatal("the refused pull is pinned")
	}
}
