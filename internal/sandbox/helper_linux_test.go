package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// buildHelper builds cmd/mur-sandbox as make build does (static, no cgo).
func buildHelper(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), HelperName)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "github.com/murmur/mur/cmd/mur-sandbox")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mur-sandbox: %v\n%s", err, b)
	}
	return out
}

// TestHelperBinary runs a session on the small helper: the holder and the
// watcher are that binary, and a command its init starts is as contained
// as one the re-executed runtime starts (no capabilities, no_new_privs,
// seccomp, Landlock, the session's PID namespace, cgroup and rlimits).
func TestHelperBinary(t *testing.T) {
	privileged(t)
	readableOutside(t, "/etc/shadow")
	bin := buildHelper(t)
	SetHelper(bin)
	defer SetHelper("")
	p := testPolicy(t)
	s, err := NewSession(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(s.holder.cmd.Process.Pid) + "/exe"); err != nil || exe != bin {
		t.Errorf("holder runs %q (%v), want %s", exe, err, bin)
	}
	var watchers int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.HasPrefix(string(cl), "mur-sandbox-watch\x00") || !strings.Contains(string(cl), s.cg.v2) {
			continue
		}
		watchers++
		if exe, _ := os.Readlink("/proc/" + e.Name() + "/exe"); exe != bin {
			t.Errorf("watcher runs %q, want %s", exe, bin)
		}
	}
	if watchers != 1 {
		t.Errorf("%d watchers of this session, want 1", watchers)
	}
	var out strings.Builder
	cmd2 := s.Command(context.Background(), "/bin/sh", "-c",
		`grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; echo pid=$$; ulimit -n; cat /proc/self/cgroup; cat /etc/shadow`)
	cmd2.Dir = p.Workdir
	cmd2.Stdout, cmd2.Stderr = &out, &out
	if err := s.Start(cmd2); err != nil {
		t.Fatal(err)
	}
	err = cmd2.Wait()
	got := out.String()
	for _, want := range []string{"CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2", "\n256\n", filepath.Base(s.cg.v2) + "\n", "Permission denied"} {
		if !strings.Contains(got, want) {
			t.Errorf("contained command's view lacks %q:\n%s", want, got)
		}
	}
	if err == nil {
		t.Errorf("reading /etc/shadow succeeded:\n%s", got)
	}
	// pid 1 is the holder; the command has a small pid of the session's
	// namespace, not the host's.
	if i := strings.Index(got, "pid="); i < 0 || func() bool { n, _ := strconv.Atoi(strings.Fields(got[i+4:])[0]); return n < 2 || n > 100 }() {
		t.Errorf("command's pid is not the session namespace's:\n%s", got)
	}
}

// TestHelperBesideExecutable: the helper is found beside the running
// executable (symlinks resolved, as a PATH link to bin/mur), and only when
// it is an executable regular file.
func TestHelperBesideExecutable(t *testing.T) {
	dir := t.TempDir()
	mur := filepath.Join(dir, "mur")
	if err := os.WriteFile(mur, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := besideExecutable(mur); got != "" {
		t.Fatalf("no helper installed, found %q", got)
	}
	h := filepath.Join(dir, HelperName)
	if err := os.WriteFile(h, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := besideExecutable(mur); got != "" {
		t.Fatalf("found a helper that is not executable: %q", got)
	}
	if err := os.Chmod(h, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := besideExecutable(mur); got != h {
		t.Fatalf("besideExecutable = %q, want %q", got, h)
	}
	link := filepath.Join(t.TempDir(), "mur")
	if err := os.Symlink(mur, link); err != nil {
		t.Fatal(err)
	}
	if got := besideExecutable(link); got != h {
		t.Fatalf("through a symlink: %q, want %q", got, h)
	}
}

// TestLandlockRulesetOncePerSession: the session's Landlock ruleset is
// built once — by the holder inside the session's mount namespace, or by
// the runtime where there is none — and each command's init only enforces
// it: the spec a command carries holds a descriptor of that ruleset, not
// the rules, and the ruleset still confines every command.
func TestLandlockRulesetOncePerSession(t *testing.T) {
	h := privileged(t)
	readableOutside(t, "/etc/shadow")
	for _, mountNS := range []bool{true, false} {
		t.Run(fmt.Sprintf("mountns=%v", mountNS), func(t *testing.T) {
			host := h
			host.MountNS = mountNS
			p := testPolicy(t)
			s, err := newSession(context.Background(), host, p)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.ruleset == nil {
				t.Fatal("no ruleset built for the session")
			}
			if l, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", s.ruleset.Fd())); l != "anon_inode:[landlock-ruleset]" {
				t.Fatalf("session ruleset descriptor is %q", l)
			}
			for i := 0; i < 2; i++ {
				cmd := s.Command(context.Background(), "/bin/sh", "-c", "echo ok > f && cat f && cat /etc/shadow")
				cmd.Dir = p.Workdir
				var spec initSpec
				if err := json.Unmarshal([]byte(cmd.Args[1]), &spec); err != nil {
					t.Fatal(err)
				}
				if spec.LandlockFD < 3 || cmd.ExtraFiles[spec.LandlockFD-3] != s.ruleset || strings.Contains(cmd.Args[1], `"kind"`) {
					t.Fatalf("spec does not pass the session's ruleset (fd %d): %s", spec.LandlockFD, cmd.Args[1])
				}
				out, err := cmd.CombinedOutput()
				if err == nil || !strings.HasPrefix(string(out), "ok\n") || !strings.Contains(string(out), "Permission denied") {
					t.Fatalf("call %d: want the workdir writable and /etc/shadow denied, got %q %v", i, out, err)
				}
			}
		})
	}
}
