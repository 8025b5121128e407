package sandbox

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// netModules are the nf_tables expressions the network namespace's rules
// use (netns_linux.go): TPROXY and the socket match steer each flow to
// the egress, reject ends what is not granted. Each is named with the
// kernel option that builds it in.
var netModules = []struct{ name, config string }{
	{"nft_tproxy", "CONFIG_NFT_TPROXY"},
	{"nft_socket", "CONFIG_NFT_SOCKET"},
	{"nft_reject_inet", "CONFIG_NFT_REJECT_INET"},
}

// missingNetModules is how Probe learns which of netModules this kernel
// can neither find loaded, built in nor load; a variable so a test can
// stand in for a host without them.
var missingNetModules = func() []string { return missingModules("/", kernelRelease()) }

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// missingModules lists the netModules that the kernel under root (/ on a
// host; a fixture tree in tests) has neither loaded (/proc/modules), built
// in (modules.builtin, or =y in /proc/config.gz) nor can load (listed in
// modules.dep, which is where the kernel's automatic module load looks).
// A module is reported missing only on evidence: a kernel whose module
// tables and configuration cannot be read is taken to have them all, and
// the session's rule setup says so if it does not.
func missingModules(root, release string) []string {
	modDir := filepath.Join(root, "lib/modules", release)
	loaded := moduleNames(filepath.Join(root, "proc/modules"), func(l string) string {
		name, _, _ := strings.Cut(l, " ")
		return name
	})
	builtin := moduleNames(filepath.Join(modDir, "modules.builtin"), moduleFile)
	loadable := moduleNames(filepath.Join(modDir, "modules.dep"), func(l string) string {
		path, _, _ := strings.Cut(l, ":")
		return moduleFile(path)
	})
	var undecided []string
	for _, m := range netModules {
		if !loaded[m.name] && !builtin[m.name] && !loadable[m.name] {
			undecided = append(undecided, m.name)
		}
	}
	if len(undecided) == 0 {
		return nil
	}
	// The kernel's configuration is read only when the tables did not
	// decide (a kernel without module support has no tables at all).
	config := kernelConfig(filepath.Join(root, "proc/config.gz"))
	if loaded == nil && builtin == nil && loadable == nil && config == nil {
		return nil
	}
	var missing []string
	for _, m := range netModules {
		switch {
		case !slices.Contains(undecided, m.name), config[m.config] == "y":
		case config[m.config] == "m" && loadable == nil && loaded == nil:
			// Built as a module, but this host's module tables are not
			// readable: it may still load.
		default:
			missing = append(missing, m.name)
		}
	}
	return missing
}

// moduleFile turns kernel/net/netfilter/nft_tproxy.ko.zst into nft_tproxy.
func moduleFile(path string) string {
	base := filepath.Base(strings.TrimSpace(path))
	name, _, ok := strings.Cut(base, ".ko")
	if !ok {
		return ""
	}
	return strings.ReplaceAll(name, "-", "_")
}

// moduleNames reads one name per line of path with name; nil when path
// cannot be read, so "no such table" differs from "not in the table".
func moduleNames(path string, name func(string) string) map[string]bool {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if n := name(s.Text()); n != "" {
			out[n] = true
		}
	}
	return out
}

// kernelConfig reads /proc/config.gz (CONFIG_X=y|m; "# CONFIG_X is not
// set" is absent); nil when the kernel does not expose it.
func kernelConfig(path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(z, 8<<20))
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "CONFIG_") {
			out[k] = v
		}
	}
	return out
}
