package capsule_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/cli"
	"github.com/murmur/mur/internal/providertest"
)

const pullManifest = `name: puller
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
capabilities:
  install:
    skill: ["murmur/style-*"]
    tool: ["murmur/file-*"]
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 10
`

// offered is the tool names a request offered the model.
func offered(r providertest.Request) []string {
	var names []string
	tools, _ := r.Body["tools"].([]any)
	for _, t := range tools {
		f, _ := t.(map[string]any)["function"].(map[string]any)
		name, _ := f["name"].(string)
		names = append(names, name)
	}
	return names
}

// TestPullArtifact: the model pulls a WASM tool from the global store and
// calls it in the same task, pulls a skill and removes it again; a pull
// its grant does not admit, a skill under a tool's entry and a removal of
// a declared artifact are refused with E-RUN-905, installing and removing
// nothing.
func TestPullArtifact(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	publish(t, root, "../../examples/file-go", "file-go")
	for _, n := range []string{"style-guide", "file-notes"} {
		publishDir(t, root, n, map[string][]byte{"skill.md": []byte("---\nname: " + n + "\nversion: 1.0.0\ndescription: House style.\n---\n# Style\nWrite plainly.\n")})
	}
	call := func(id, name, in string) providertest.Step {
		return providertest.Step{Calls: []providertest.Call{{ID: id, Name: name, Input: in}}, InputTokens: 10, OutputTokens: 5}
	}
	prov := providertest.Start(t,
		call("c1", "pull-artifact", `{"name":"murmur/file-go"}`),
		call("c2", "file-go", `{"op":"write","path":"out.txt","content":"pulled"}`),
		call("c3", "pull-artifact", `{"name":"other/thing"}`),
		call("c4", "pull-artifact", `{"name":"murmur/file-notes"}`),
		call("c5", "pull-artifact", `{"name":"murmur/style-guide","version":"1.0.0"}`),
		call("c6", "remove-artifact", `{"name":"murmur/driver-openai"}`),
		call("c7", "remove-artifact", `{"name":"murmur/style-guide"}`),
		providertest.Step{Text: "Done.", InputTokens: 10, OutputTokens: 2},
	)
	manifestPath := installManifest(t, root, pullManifest, prov.URL)
	capDir := filepath.Dir(manifestPath)
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "pull and write"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	reqs := prov.Requests()
	if len(reqs) != 8 {
		t.Fatalf("%d requests, want 8", len(reqs))
	}
	if got := offered(reqs[0]); !slices.Equal(got, []string{"pull-artifact", "remove-artifact"}) {
		t.Fatalf("first call offered %v", got)
	}
	if got := offered(reqs[1]); !slices.Contains(got, "file-go") {
		t.Fatalf("the call after the pull offered %v", got)
	}
	if got := offered(reqs[5]); !slices.Contains(got, "style-guide") {
		t.Fatalf("the call after the skill pull offered %v", got)
	}
	if got := offered(reqs[7]); slices.Contains(got, "style-guide") || !slices.Contains(got, "file-go") {
		t.Fatalf("the call after the removal offered %v", got)
	}
	for i, want := range map[int]string{3: "E-RUN-905", 4: "E-RUN-905", 6: "E-RUN-905"} {
		if raw := string(reqs[i].Raw); !strings.Contains(raw, want) || !strings.Contains(raw, "Nothing was") {
			t.Errorf("request %d lacks the refusal %s: %s", i, want, raw)
		}
	}
	work, _ := filepath.Glob(filepath.Join(capDir, "workdir", "ses_*", "out.txt"))
	if len(work) != 1 {
		t.Fatalf("the pulled tool wrote nothing: %v", work)
	}
	if b, _ := os.ReadFile(work[0]); string(b) != "pulled" {
		t.Fatalf("out.txt = %q", b)
	}
	lock, err := artifact.LoadLock(filepath.Join(capDir, artifact.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if pin, ok := lock.Find("murmur/file-go"); !ok || pin.Origin != artifact.OriginRuntime {
		t.Fatalf("file-go pin = %+v, %v", pin, ok)
	}
	for _, n := range []string{"murmur/style-guide", "murmur/file-notes", "other/thing"} {
		if pin, ok := lock.Find(n); ok {
			t.Errorf("murmur.lock pins %+v", pin)
		}
	}
	if pin, ok := lock.Find("murmur/driver-openai"); !ok || pin.Origin != artifact.OriginOperator {
		t.Errorf("the declared driver's pin = %+v", pin)
	}

	lines := trace(t, home)
	var refreshed, installs []map[string]any
	var runtimeDir string
	for _, l := range lines {
		switch l["event"] {
		case "session_start":
			runtimeDir, _ = l["runtime_dir"].(string)
		case "tools_refreshed":
			refreshed = append(refreshed, l)
		case "artifact_install":
			installs = append(installs, l)
		}
	}
	if len(refreshed) != 3 {
		t.Fatalf("tools_refreshed lines = %v", refreshed)
	}
	for _, r := range refreshed {
		if r["trigger"] != "agent" {
			t.Errorf("tools_refreshed = %v", r)
		}
	}
	if len(installs) != 6 || installs[0]["status"] != "installed" || installs[0]["from"] != "global" || installs[1]["status"] != "refused" || installs[1]["code"] != "E-RUN-905" {
		t.Fatalf("artifact_install lines = %v", installs)
	}
	// The pulled tool's files are under the runtime directory's
	// tools/<name>/; the removed skill's are gone.
	if _, err := os.Stat(filepath.Join(runtimeDir, "tools", "file-go", "file-go.wasm")); err != nil {
		t.Errorf("the pulled tool is not laid out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(runtimeDir, "tools", "style-guide")); !os.IsNotExist(err) {
		t.Errorf("the removed skill's folder: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(runtimeDir, "MURMUR.md"))
	if !strings.Contains(string(md), "- file-go:") || strings.Contains(string(md), "style-guide") {
		t.Errorf("MURMUR.md:\n%s", md)
	}
}
