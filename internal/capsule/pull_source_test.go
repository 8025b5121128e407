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
	"github.com/murmur/mur/internal/source/sourcetest"
)

// TestPullArtifactFromScopeSource: under install.from: [stores, sources]
// the model pulls a skill that no store holds from its scope's GitHub
// source (a loopback fake of the API); it is offered at the next call,
// pinned origin runtime with the owner's account id, and no store gains
// it. The same pull under install.from: [stores] is refused.
func TestPullArtifactFromScopeSource(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	t.Setenv("GITHUB_TOKEN", "")
	publish(t, root, "../../drivers/driver-openai", "driver-openai")
	dir := filepath.Join(root, "src", "style-guide")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "skill.md"), []byte("---\nname: style-guide\nversion: 1.0.0\ndescription: House style.\n---\n# Style\nWrite plainly.\n"), 0o644)
	zip := filepath.Join(root, "style-guide.mur.zip")
	mur(t, root, "build", dir, "-o", zip)
	b, err := os.ReadFile(zip)
	if err != nil {
		t.Fatal(err)
	}
	gh := sourcetest.New(t)
	gh.AddRepo("ana-org/skills", 4242)
	gh.Publish("ana-org/skills", "v1.0.0", map[string][]byte{"style-guide-1.0.0.mur.zip": b})
	mur(t, root, "config", "set", "-g", "sources.ana.repo", "ana-org/skills")
	mur(t, root, "config", "set", "-g", "sources.ana.api_url", gh.URL)

	call := providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "pull-artifact", Input: `{"name":"ana/style-guide"}`}}, InputTokens: 10, OutputTokens: 5}
	done := providertest.Step{Text: "Done.", InputTokens: 10, OutputTokens: 2}
	prov := providertest.Start(t, call, done, call, done)
	manifest := strings.Replace(pullManifest, `skill: ["murmur/style-*"]`, `skill: ["ana/style-*"]`+"\n    from: [stores, sources]", 1)
	manifestPath := installManifest(t, root, manifest, prov.URL)
	capDir := filepath.Dir(manifestPath)
	run := func() {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := cli.Main(context.Background(), []string{"run", "--manifest", manifestPath, "--task", "pull"}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
	}
	run()
	reqs := prov.Requests()
	if len(reqs) != 2 || !slices.Contains(offered(reqs[1]), "style-guide") {
		t.Fatalf("%d requests; the call after the pull offered %v", len(reqs), offered(reqs[len(reqs)-1]))
	}
	lock, err := artifact.LoadLock(filepath.Join(capDir, artifact.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if pin, ok := lock.Find("ana/style-guide"); !ok || pin.Origin != artifact.OriginRuntime || pin.OwnerID != 4242 || pin.From != "source:ana" {
		t.Fatalf("pin = %+v, %v", pin, ok)
	}
	for _, store := range []string{filepath.Join(capDir, ".murmur", "store"), filepath.Join(home, ".murmur", "store")} {
		if out, _ := os.ReadFile(filepath.Join(store, "index.json")); bytes.Contains(out, []byte("style-guide")) {
			t.Fatalf("%s gained the pulled skill: %s", store, out)
		}
	}

	// Without sources in install.from, the same pull finds nothing.
	os.WriteFile(manifestPath, []byte(strings.Replace(strings.ReplaceAll(manifest, "%ENDPOINT%", prov.URL), "from: [stores, sources]", "from: [stores]", 1)), 0o644)
	run()
	if raw := string(prov.Requests()[3].Raw); !strings.Contains(raw, "ana/style-guide") || !strings.Contains(raw, "E-REG-001") {
		t.Fatalf("the pull from the stores alone answered: %s", raw)
	}
}
