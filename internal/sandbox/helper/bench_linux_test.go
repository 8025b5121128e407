package helper

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// benchRules is the size of a scoped session's ruleset: the system trees,
// the /etc files programs read, the device nodes, /proc, an allowlisted
// binary and the three session folders.
func benchRules(b *testing.B) []LandlockRule {
	var rules []LandlockRule
	for _, p := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives", "/usr/bin/true"} {
		rules = append(rules, LandlockRule{Path: p, Kind: GrantReadExec})
	}
	for _, p := range []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
		"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf",
		"/etc/bash.bashrc", "/etc/profile", "/etc/inputrc", "/etc/locale.alias", "/etc/mime.types",
		"/etc/protocols", "/etc/services", "/etc/magic", "/etc/os-release", "/etc/debian_version",
		"/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/proc"} {
		rules = append(rules, LandlockRule{Path: p, Kind: GrantRead})
	}
	for _, p := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"} {
		rules = append(rules, LandlockRule{Path: p, Kind: GrantDev})
	}
	for i := 0; i < 3; i++ {
		rules = append(rules, LandlockRule{Path: b.TempDir(), Kind: GrantRW})
	}
	return rules
}

// BenchmarkInitSteps times the work a contained command's init does that
// can be timed in-process (the rest — namespace joins, rlimits, capability
// drop, restrict_self and seccomp install — changes the calling thread for
// good): what each call pays besides starting the helper and the target.
func BenchmarkInitSteps(b *testing.B) {
	rules := benchRules(b)
	spec := InitSpec{V: Protocol, Path: "/usr/bin/true", Args: []string{"true"}, NetnsFD: 3, MntnsFD: 4, IpcnsFD: 5, PidnsFD: 6, MaxFD: 6,
		Rlimits:    []Rlimit{{Resource: 7, Cur: 1024, Max: 1024}, {Resource: 1, Cur: 1 << 32, Max: 1 << 32}, {Resource: 9, Cur: 2 << 30, Max: 2 << 30}},
		LandlockFD: 7, Seccomp: true, Proxy: "127.0.0.1:34567"}
	raw, err := Encode(spec)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportMetric(float64(len(raw)), "spec-bytes")
		for b.Loop() {
			var s InitSpec
			if err := decode(raw, &s, &s.V); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("landlock-ruleset", func(b *testing.B) {
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1); errno != 0 {
			b.Skip("no Landlock")
		}
		b.ReportMetric(float64(len(rules)), "rules")
		for b.Loop() {
			fd, err := LandlockRuleset(7, rules)
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}
	})
	b.Run("seccomp-filter", func(b *testing.B) {
		for b.Loop() {
			if _, err := SeccompFilter(false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cap-last-cap", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
