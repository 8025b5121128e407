package tour

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// heading opens the README section whose first ```sh block is the tour.
const heading = "## A five-minute tour"

// tourCommands returns the command lines of the tour block: every line of
// the first ```sh block after heading that is neither blank nor a comment.
func tourCommands(readme string) []string {
	_, after, ok := strings.Cut(readme, "\n"+heading+"\n")
	if !ok {
		return nil
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		return nil
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, l := range strings.Split(block, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

func TestTourCommandsFound(t *testing.T) {
	readme := "# x\n\n" + heading + "\n\nText.\n\n```sh\n# a comment\nmur version   # trailing\n\ncd capsules/hello\n```\n\n```sh\nnot this\n```\n"
	got := tourCommands(readme)
	want := []string{"mur version   # trailing", "cd capsules/hello"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("tourCommands = %q, want %q", got, want)
	}
}

// TestTour runs the tour's commands in order, in one shell (so cd and
// export carry over as they do for a reader), in a copy of the repository
// with a HOME of its own, and checks that its run ends ok.
func TestTour(t *testing.T) {
	if os.Getenv("MUR_TEST_TOUR") != "1" {
		t.Skip("set MUR_TEST_TOUR=1 (make test-tour) to run the README tour")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := tourCommands(string(readme))
	if len(cmds) < 10 {
		t.Fatalf("README.md: %q has %d commands in its first ```sh block; the tour was lost", heading, len(cmds))
	}
	for _, need := range []string{"bin/mur", "build/demo/providerd"} {
		if _, err := os.Stat(filepath.Join(root, need)); err != nil {
			t.Fatalf("%s is missing: the tour starts after `make demo`; run it first", need)
		}
	}

	dir := t.TempDir()
	clone := filepath.Join(dir, "mur")
	copyCheckout(t, root, clone)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}

	// Each command is echoed before it runs, so a failure names it.
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, c := range cmds {
		script.WriteString("printf '%s\\n' " + shellQuote("tour$ "+c) + " >&2\n")
		script.WriteString(c + "\n")
	}
	script.WriteString("echo 'tour: done' >&2\n")

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = clone
	cmd.Env = tourEnv(t, home)
	// Its own process group: the provider double the tour starts in the
	// background is ended with it even when a command fails first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, testWriter{t})
	cmd.Stderr = cmd.Stdout
	runErr := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if runErr != nil {
		t.Fatalf("the tour failed: %v (the last `tour$` line above is the command)", runErr)
	}
	text := out.String()
	if !strings.Contains(text, "tour: done") {
		t.Fatal("the tour did not reach its end")
	}
	if !strings.Contains(text, " status: ok ") {
		t.Error("the tour's mur run did not end with status: ok")
	}
	if notes, _ := filepath.Glob(filepath.Join(clone, "capsules/hello/workdir/*/notes/hello.md")); len(notes) != 1 {
		t.Errorf("the tour's run should leave one note in its work folder; found %v", notes)
	}
}

// tourEnv is the environment of a newcomer's shell with a fresh HOME,
// keeping Go's caches where they are so the tour does not download or
// rebuild the world.
func tourEnv(t *testing.T, home string) []string {
	keep := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		v, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		keep[k] = strings.TrimSpace(string(v))
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || keep[k] != "" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home)
	for k, v := range keep {
		env = append(env, k+"="+v)
	}
	return env
}

// copyCheckout makes dst a checkout as a fresh clone after `make demo`
// has: the tracked files, the components built beside their manifests,
// and links to what make demo built (bin/, build/) and installed (the
// guest toolchain's node_modules).
func copyCheckout(t *testing.T, root, dst string) {
	ls := exec.Command("git", "ls-files", "-z")
	ls.Dir = root
	b, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	for _, pat := range []string{"examples/*/*.wasm", "drivers/*/*.wasm"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	for _, rel := range files {
		src := filepath.Join(root, rel)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"bin", "build", "tools/guest/node_modules"} {
		if err := os.Symlink(filepath.Join(root, rel), filepath.Join(dst, rel)); err != nil {
			t.Fatal(err)
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// testWriter streams the tour's output into the test log line by line.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(p))
	for sc.Scan() {
		w.t.Log(sc.Text())
	}
	return len(p), nil
}
