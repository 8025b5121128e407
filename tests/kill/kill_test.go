package kill

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/providertest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/store"
)

// Kills per command: at least 200 in all.
const (
	publishKills = 60
	installKills = 100
	runKills     = 40
	// fullRunEvery: after this many killed runs, one runs to its end.
	fullRunEvery = 8
)

// TestKill kills mur publish, mur install and mur run at random moments
// and checks what each kill leaves. MUR_KILL_SEED replays a run's moments.
func TestKill(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	phases := []struct {
		name string
		run  func(*fixture)
	}{
		{"publish", killPublish},
		{"install", killInstall},
		{"run", killRun},
		{"door", killDoor},
		{"retention", liveRetention},
		{"concurrent-install", concurrentInstalls},
	}
	ran := 0
	for _, p := range phases {
		before, at := f.kills, time.Now()
		ok := t.Run(p.name, func(t *testing.T) {
			parent := f.t
			f.t = t
			defer func() { f.t = parent }()
			ran++
			p.run(f)
		})
		t.Logf("%s: %d kills in %s", p.name, f.kills-before, time.Since(at).Round(time.Millisecond))
		if !ok {
			return
		}
	}
	t.Logf("%d kills in %s", f.kills, time.Since(start).Round(time.Millisecond))
	if ran == len(phases) && f.kills < publishKills+installKills+runKills {
		t.Fatalf("%d kills landed, want %d", f.kills, publishKills+installKills+runKills)
	}
}

// concurrentInstalls starts 8 mur installs at once in one project, each
// from its own manifest naming another artifact (--manifest), several
// rounds: murmur.lock must end up holding every pin. Without the project
// lock each install wrote back the lock it had read, dropping the others'.
func concurrentInstalls(f *fixture) {
	t := f.t
	const n, rounds = 8, 3
	for i := range n {
		zip := filepath.Join(f.root, fmt.Sprintf("c%d.mur.zip", i))
		smallToolNamed(t, zip, fmt.Sprintf("c%d", i), "1.0.0")
		f.must(f.root, "publish", zip, "--scope", "conc")
	}
	for round := range rounds {
		dir := filepath.Join(f.root, fmt.Sprintf("conc%d", round))
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for i := range n {
			m := filepath.Join(dir, fmt.Sprintf("m%d.yaml", i))
			writeFile(t, m, fmt.Sprintf("name: conc%d\nversion: \"1\"\nartifacts:\n  - name: conc/c%d\n    version: \"1.0.0\"\n    runtime: tool\n", i, i))
			c := f.command(dir, "install", "--manifest", m)
			out := &strings.Builder{}
			c.Stdout, c.Stderr = out, out
			cmds, outs = append(cmds, c), append(outs, out)
		}
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("round %d: install %d: %v\n%s", round, i, err, outs[i])
			}
		}
		lock := f.checkProject(dir, map[string]string{}, fmt.Sprintf("concurrent installs, round %d", round))
		for i := range n {
			if _, ok := lock.Find(fmt.Sprintf("conc/c%d", i)); !ok {
				t.Errorf("round %d: conc/c%d's pin was lost: murmur.lock holds %d of %d", round, i, len(lock.Artifacts), n)
			}
		}
		if t.Failed() {
			return
		}
	}
}

// smallTool packs a tool artifact: version v, a payload of random bytes
// so each version is a new package with blobs to write. mur build is not
// what is killed here, so the package is packed in-process.
func smallTool(t *testing.T, path, version string) string {
	t.Helper()
	return smallToolNamed(t, path, "kt", version)
}

// smallToolNamed is smallTool for the artifact name.
func smallToolNamed(t *testing.T, path, name, version string) string {
	t.Helper()
	payload := make([]byte, 32<<10)
	rand.Read(payload)
	b, err := artifact.Pack([]artifact.Entry{
		{Path: "murmur.yaml", Data: fmt.Appendf(nil, "name: %s\nversion: %q\nruntime: tool\nrequires_files: [tool.wasm]\n", name, version)},
		{Path: "tool.wasm", Data: append([]byte("\x00asm murmur:tool/run@0.1.0 "), payload...)},
	})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
	return artifact.Digest(b)
}

// killPublish publishes a new version of a tool into the global store per
// round, killing the publish at a random moment, then checks the store and
// publishes again to its end: the version is then served with the
// package's bytes.
func killPublish(f *fixture) {
	t := f.t
	global := store.GlobalStore(f.murmurDir())
	zip := filepath.Join(f.root, "kt.mur.zip")
	smallTool(t, zip, "1.0.0")
	_, full := f.must(f.root, "publish", zip, "--scope", "kill")
	landed := 0
	for round := 1; landed < publishKills; round++ {
		if round > 4*publishKills {
			t.Fatalf("only %d of %d publish kills landed in %d rounds", landed, publishKills, round)
		}
		version := fmt.Sprintf("1.0.%d", round)
		digest := smallTool(t, zip, version)
		ok, pid, ws := f.killAfter(f.between(full), f.root, "publish", zip, "--scope", "kill")
		if !ok {
			continue
		}
		landed++
		what := fmt.Sprintf("publish kill %d (%s)", landed, version)
		f.settle(pid, ws, what)
		f.checkStore(global, what)
		f.must(f.root, "publish", zip, "--scope", "kill")
		f.checkStore(global, what+", published again")
		ref, _ := artifact.ParseRef("kill/kt@" + version)
		got, err := global.Fetch(t.Context(), ref)
		if err != nil || got.Digest != digest {
			t.Fatalf("%s: the next publish left %s serving %v, %v; the package is %s", what, ref, got, err, digest)
		}
	}
}

// killInstall pins a different published version per round, killing the
// install at a random moment: murmur.lock must read whole and pin only
// bytes the project store serves, and the next install must pin the
// version asked for.
func killInstall(f *fixture) {
	t := f.t
	dir := filepath.Join(f.root, "inst")
	roles := map[string]string{"kill/kt": "tool"}
	capsule := func(version string) {
		writeFile(t, filepath.Join(dir, "murmur.yaml"), fmt.Sprintf("name: kill-install\nversion: \"1\"\nartifacts:\n  - name: kill/kt\n    version: %q\n    runtime: tool\n", version))
	}
	capsule("1.0.0")
	_, full := f.must(dir, "install")
	versions, err := store.GlobalStore(f.murmurDir()).Versions(t.Context(), "kill/kt")
	if err != nil || len(versions) < 2 {
		t.Fatalf("published versions: %v, %v", versions, err)
	}
	landed := 0
	for round := 1; landed < installKills; round++ {
		if round > 4*installKills {
			t.Fatalf("only %d of %d install kills landed in %d rounds", landed, installKills, round)
		}
		version := versions[f.rng.IntN(len(versions))].Version
		capsule(version)
		ok, pid, ws := f.killAfter(f.between(full), dir, "install")
		if !ok {
			continue
		}
		landed++
		what := fmt.Sprintf("install kill %d (%s)", landed, version)
		f.settle(pid, ws, what)
		f.checkProject(dir, roles, what)
		f.must(dir, "install")
		lock := f.checkProject(dir, roles, what+", installed again")
		if pin, ok := lock.Find("kill/kt"); !ok || pin.Version != version {
			t.Fatalf("%s: the next install pinned %+v, want %s", what, pin, version)
		}
	}
}

// runCapsule is the capsule killKun runs: the real driver and tool
// components, a shell tool (so a kill can land while sandboxed commands
// run), the machine spend meter and retention of the 3 newest sessions.
const runCapsule = `name: kill-run
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %s/v1
      api_key: ${OPENAI_API_KEY}
  - name: murmur/file-go
    version: "0.1.0"
    runtime: tool
capabilities:
  shell:
    allow: [sleep]
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 5
trace:
  retain:
    max_sessions: 3
`

// runSteps: a tool call, a sandboxed command that runs a second, an answer.
func runSteps() []providertest.Step {
	return []providertest.Step{
		{Text: "writing", Calls: []providertest.Call{{ID: "c1", Name: "file-go", Input: `{"op":"write","path":"a.txt","content":"x"}`}}, InputTokens: 40, OutputTokens: 9},
		{Text: "waiting", Calls: []providertest.Call{{ID: "c2", Name: "sleep", Input: `{"command":"1"}`}}, InputTokens: 50, OutputTokens: 9},
		{Text: "done", InputTokens: 60, OutputTokens: 8},
	}
}

// killRun kills mur run at random moments of a session that compiles and
// instantiates its components, calls a WASM tool and runs a sandboxed
// command: nothing of the killed session may survive it, its records and
// the spend meter must read whole, and a run to its end must still work
// (and sweep the killed sessions).
func killRun(f *fixture) {
	t := f.t
	dir := filepath.Join(f.root, "run")
	roles := map[string]string{"murmur/driver-openai": "driver", "murmur/file-go": "tool"}
	f.publishComponents()
	serve := func() *providertest.Server {
		srv, err := providertest.Serve(runSteps()...)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "murmur.yaml"), fmt.Sprintf(runCapsule, srv.URL))
		return srv
	}
	fullRun := func(what string) time.Duration {
		srv := serve()
		defer srv.Close()
		out, d := f.must(dir, "run", "--task", "go")
		if !strings.Contains(out, "status: ok") {
			t.Fatalf("%s: the run did not end ok:\n%s", what, out)
		}
		return d
	}
	srv := serve()
	srv.Close()
	f.must(dir, "install")
	fullRun("first run") // compiles the components unless the cache has them
	full := fullRun("warm run")
	t.Logf("a warm run takes %s", full.Round(time.Millisecond))
	landed := 0
	for round := 1; landed < runKills; round++ {
		if round > 3*runKills {
			t.Fatalf("only %d of %d run kills landed in %d rounds", landed, runKills, round)
		}
		srv := serve()
		ok, pid, ws := f.killAfter(f.between(full), dir, "run", "--task", "go")
		srv.Close()
		if !ok {
			continue
		}
		landed++
		what := fmt.Sprintf("run kill %d", landed)
		f.settle(pid, ws, what)
		f.checkMeter(what)
		f.checkRecords(dir, what)
		f.checkProject(dir, roles, what)
		if landed%fullRunEvery == 0 {
			fullRun(what + ", the next run")
		}
	}
	fullRun("the last run")
	f.checkMeter("the last run")
	if ids := f.checkRecords(dir, "the last run"); len(ids) > 3 {
		t.Fatalf("retention kept %d sessions, want at most 3: the killed sessions were not released: %v", len(ids), ids)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "workdir", "*"))
	if len(leftovers) > 3 {
		t.Fatalf("%d work folders remain after retention of 3 sessions", len(leftovers))
	}
	if _, err := os.Stat(filepath.Join(f.murmurDir(), "spend", "machine-tokens.json")); err != nil {
		t.Fatalf("the machine meter was never written: %v", err)
	}
}

// publishComponents publishes the driver and tool components into the
// global store and sets the machine's credential and spend meter, once.
func (f *fixture) publishComponents() {
	if f.published {
		return
	}
	t := f.t
	for _, c := range []struct{ src, name string }{{"drivers/driver-openai", "driver-openai"}, {"examples/file-go", "file-go"}} {
		pkg := filepath.Join(f.root, "src", c.name)
		copyFile(t, filepath.Join("..", "..", c.src, "murmur.yaml"), filepath.Join(pkg, "murmur.yaml"))
		copyFile(t, filepath.Join(f.guest, c.name+".wasm"), filepath.Join(pkg, c.name+".wasm"))
		zip := filepath.Join(f.root, c.name+".mur.zip")
		f.must(f.root, "build", pkg, "-o", zip)
		f.must(f.root, "publish", zip, "--scope", "murmur")
	}
	f.must(f.root, "config", "set", "-g", "credentials.OPENAI_API_KEY", "sk-kill-0123456789abcdef")
	f.must(f.root, "config", "set", "-g", "spend.machine_tokens_per_day", "1000000000")
	f.published = true
}

// liveRetention is the case end to end: two runs of one capsule
// with max_sessions: 1. The first is still waiting on the model when the
// second runs to its end; the second's retention must leave the first's
// records and work folder alone, and the first must end ok. A third run,
// once both have ended, removes them.
func liveRetention(f *fixture) {
	t := f.t
	f.publishComponents()
	dir := filepath.Join(f.root, "retain")
	capsule := strings.Replace(runCapsule, "max_sessions: 3", "max_sessions: 1", 1)
	srv, err := providertest.Serve(
		providertest.Step{Text: "first done", Delay: 6 * time.Second},
		providertest.Step{Text: "second done"},
		providertest.Step{Text: "third done"},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	writeFile(t, filepath.Join(dir, "murmur.yaml"), fmt.Sprintf(capsule, srv.URL))
	f.must(dir, "install")
	first := f.command(dir, "run", "--task", "first")
	var out strings.Builder
	first.Stdout, first.Stderr = &out, &out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	asked := time.Now().Add(time.Minute)
	for len(srv.Requests()) == 0 {
		if time.Now().After(asked) {
			t.Fatal("the first run never asked the model")
		}
		time.Sleep(20 * time.Millisecond)
	}
	running := f.checkRecords(dir, "first run started")
	if len(running) != 1 {
		t.Fatalf("sessions while the first runs: %v", running)
	}
	if out, _ := f.must(dir, "run", "--task", "second"); !strings.Contains(out, "second done") {
		t.Fatalf("the second run:\n%s", out)
	}
	if ids := f.checkRecords(dir, "second run ended"); !slices.Contains(ids, running[0]) {
		t.Fatalf("the second run's retention removed the running session %s: %v", running[0], ids)
	}
	if _, err := os.Stat(filepath.Join(dir, "workdir", running[0])); err != nil {
		t.Fatalf("the running session's work folder: %v", err)
	}
	if err := first.Wait(); err != nil || !strings.Contains(out.String(), "first done") || !strings.Contains(out.String(), "status: ok") {
		t.Fatalf("the first run, its records kept: %v\n%s", err, out.String())
	}
	group, _ := session.RecordsGroup(f.murmurDir(), dir)
	if b, err := os.ReadFile(filepath.Join(group, running[0], "out", "result.txt")); err != nil || !strings.Contains(string(b), "first done") {
		t.Fatalf("the first run's result.txt: %q, %v", b, err)
	}
	f.must(dir, "run", "--task", "third")
	if ids := f.checkRecords(dir, "third run ended"); len(ids) != 1 || slices.Contains(ids, running[0]) {
		t.Fatalf("after both ended, max_sessions: 1 keeps only the newest: %v", ids)
	}
}
