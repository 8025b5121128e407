package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/diag"
)

func fullHost() Host {
	return Host{OS: "linux", LandlockABI: 7, Seccomp: true, NetNS: true, MountNS: true, CgroupV2: "/sys/fs/cgroup/x",
		Controllers: map[string]string{"memory": "v2", "pids": "v2", "cpu": "v2", "io": "v2"}, SwapBounded: true}
}

func TestExplainClasses(t *testing.T) {
	tests := []struct {
		name   string
		host   func(*Host)
		policy Policy
		want   Class
		warn   bool
	}{
		{"full host seals a sealed floor", nil, Policy{Floor: Sealed}, Sealed, false},
		{"full host runs a lower floor scoped", nil, Policy{Floor: Scoped}, Scoped, false},
		{"full host runs no floor scoped", nil, Policy{}, Scoped, false},
		{"no mount namespace is advisory: the loader could run a written file", func(h *Host) { h.MountNS = false }, Policy{Floor: Sealed}, Advisory, false},
		{"read_only without mount namespace is advisory", func(h *Host) { h.MountNS = false }, Policy{ReadOnly: []string{"tests"}}, Advisory, false},
		{"old landlock is advisory", func(h *Host) { h.LandlockABI = 2 }, Policy{}, Advisory, true},
		{"landlock without signal scope is advisory", func(h *Host) { h.LandlockABI = 5 }, Policy{}, Advisory, false},
		{"no seccomp is advisory", func(h *Host) { h.Seccomp = false }, Policy{}, Advisory, true},
		{"no netns is advisory", func(h *Host) { h.NetNS = false }, Policy{}, Advisory, true},
		{"no pids controller is advisory", func(h *Host) { delete(h.Controllers, "pids") }, Policy{}, Advisory, false},
		{"workdir_exec caps at advisory", nil, Policy{WorkdirExec: true}, Advisory, false},
		{"off linux", func(h *Host) { *h = Host{OS: "darwin"} }, Policy{}, Advisory, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fullHost()
			if tt.host != nil {
				tt.host(&h)
			}
			r := Explain(h, tt.policy)
			if r.Achieved != tt.want {
				t.Fatalf("achieved %s, want %s\n%s", r.Achieved, tt.want, r)
			}
			if got := r.Warnings.Has(diag.SecNoKernelEnforcement); got != tt.warn {
				t.Fatalf("W-SEC-001 = %v, want %v\n%s", got, tt.warn, r)
			}
			if Achieved(h, tt.policy) != tt.want {
				t.Fatal("Achieved disagrees with Explain")
			}
		})
	}
}

func TestCheckFloor(t *testing.T) {
	noMountNS := fullHost()
	noMountNS.MountNS = false
	noMountNS.Why = map[string]string{"mount namespace": "no CAP_SYS_ADMIN"}
	tests := []struct {
		name   string
		host   Host
		floor  Class
		refuse bool
	}{
		{"no floor", Host{}, 0, false},
		{"advisory floor anywhere", Host{}, Advisory, false},
		{"advisory on a host without mount namespace", noMountNS, Advisory, false},
		{"scoped on a host without mount namespace", noMountNS, Scoped, true},
		{"sealed on a host without mount namespace", noMountNS, Sealed, true},
		{"scoped on bare host", Host{}, Scoped, true},
		{"sealed on full host", fullHost(), Sealed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckFloor(tt.host, Policy{Floor: tt.floor})
			if (err != nil) != tt.refuse {
				t.Fatalf("err = %v, refuse %v", err, tt.refuse)
			}
			if err == nil {
				return
			}
			var d diag.Diagnostic
			if !errors.Is(err, ErrFloor) || !errors.As(err, &d) || d.Code != "E-CAP-003" {
				t.Fatalf("want ErrFloor and E-CAP-003, got %v", err)
			}
			if d.Field != "capabilities.containment" || !strings.Contains(d.Msg, "not enforced") {
				t.Fatalf("diagnostic does not say what is missing: %v", d)
			}
		})
	}
	err := CheckFloor(noMountNS, Policy{Floor: Sealed})
	if !strings.Contains(err.Error(), "no CAP_SYS_ADMIN") {
		t.Fatalf("refusal does not carry the probe's reason: %v", err)
	}
}

func TestParseClass(t *testing.T) {
	for in, want := range map[string]Class{"": 0, "advisory": Advisory, "scoped": Scoped, "sealed": Sealed} {
		got, err := ParseClass(in)
		if err != nil || got != want {
			t.Fatalf("ParseClass(%q) = %v, %v", in, got, err)
		}
		if in != "" && got.String() != in {
			t.Fatalf("%v.String() = %q", got, got.String())
		}
	}
	if _, err := ParseClass("strict"); !errors.Is(err, ErrPolicy) {
		t.Fatalf("want ErrPolicy, got %v", err)
	}
}

func TestReportLines(t *testing.T) {
	h := fullHost()
	h.Seccomp = false
	h.Why = map[string]string{"seccomp": "kernel built without seccomp"}
	r := Explain(h, Policy{Floor: Advisory})
	text := r.String()
	for _, want := range []string{"containment: advisory (declared floor: advisory)", "seccomp", "not enforced", "kernel built without seccomp", "W-SEC-001"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

func TestValidate(t *testing.T) {
	good := Policy{Workdir: "/w", Home: "/h", Tmp: "/t"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.Workdir = "w"
	bad.InterpreterRuntime = []RuntimeDir{{Path: "lib"}}
	err := bad.Validate()
	if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), `workdir "w"`) || !strings.Contains(err.Error(), `"lib"`) {
		t.Fatalf("want every problem named, got %v", err)
	}
}

// TestShellAllowAtExec: every report says what shell.allow means at exec for
// the class achieved, and that line never makes a floor refusal.
func TestShellAllowAtExec(t *testing.T) {
	for _, tt := range []struct {
		host  func(*Host)
		floor Class
		want  Class
		says  string
	}{
		{nil, Sealed, Sealed, "bound whole into the composed root"},
		{nil, Scoped, Scoped, "every binary under the host's /usr"},
		{func(h *Host) { h.Seccomp = false }, 0, Advisory, "nothing is checked at exec"},
	} {
		h := fullHost()
		if tt.host != nil {
			tt.host(&h)
		}
		p := Policy{Floor: tt.floor, ExecPaths: []string{"/usr/bin/bash", "/usr/bin/git"}}
		r := Explain(h, p)
		if r.Achieved != tt.want {
			t.Fatalf("achieved %s, want %s", r.Achieved, tt.want)
		}
		var line string
		for _, l := range r.Lines() {
			if strings.Contains(l, shellAllowExec) {
				line = l
			}
		}
		if !strings.Contains(line, "not enforced") || !strings.Contains(line, tt.says) {
			t.Errorf("%s: shell.allow line %q does not say %q", tt.want, line, tt.says)
		}
		if err := CheckFloor(h, p); err != nil {
			t.Errorf("%s: the shell.allow line made a refusal: %v", tt.want, err)
		}
	}
}

// TestExplainNamesProxyVariables: the proxy variables are beyond the
// spec's environment rows (issue #12 item 4), so the report says so.
func TestExplainNamesProxyVariables(t *testing.T) {
	r := Explain(fullHost(), Policy{})
	if !strings.Contains(r.String(), "http_proxy, https_proxy, ALL_PROXY and no_proxy") {
		t.Fatalf("the network line does not name the proxy variables:\n%s", r)
	}
}
