package sandbox

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProbeNetModulesMissing: a host whose kernel cannot load the nf_tables
// expressions the egress rules use has no network namespace, and the
// report names the modules (rather than every session failing at start).
func TestProbeNetModulesMissing(t *testing.T) {
	if !hasCapSysAdmin() {
		t.Skip("the network namespace needs CAP_SYS_ADMIN before modules matter")
	}
	saved := missingNetModules
	t.Cleanup(func() { missingNetModules = saved })

	missingNetModules = func() []string { return nil }
	if h := Probe(); !h.NetNS {
		t.Fatalf("with every module: NetNS false (%s)", h.Why["network namespace"])
	}

	missingNetModules = func() []string { return []string{"nft_tproxy", "nft_socket"} }
	h := Probe()
	if h.NetNS {
		t.Fatal("NetNS true without nft_tproxy and nft_socket")
	}
	why := h.Why["network namespace"]
	if !strings.Contains(why, "nft_tproxy, nft_socket") || !strings.Contains(why, "modprobe") {
		t.Errorf("why = %q", why)
	}
	r := Explain(h, Policy{})
	if r.Achieved >= Scoped {
		t.Errorf("achieved %v without the network namespace", r.Achieved)
	}
	if !strings.Contains(r.String(), "nft_tproxy, nft_socket") {
		t.Errorf("the report does not name the modules:\n%s", r)
	}
}

// TestMissingModules reads fixture kernels: loaded, built in, loadable
// from modules.dep, or only in /proc/config.gz.
func TestMissingModules(t *testing.T) {
	const rel = "6.1.0-test"
	kernel := func(t *testing.T, files map[string]string) string {
		root := t.TempDir()
		for name, text := range files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			data := []byte(text)
			if strings.HasSuffix(name, ".gz") {
				var b bytes.Buffer
				z := gzip.NewWriter(&b)
				z.Write(data)
				z.Close()
				data = b.Bytes()
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	mods := "lib/modules/" + rel + "/"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"nothing readable", nil, nil},
		{"all loadable", map[string]string{
			mods + "modules.dep": "kernel/net/netfilter/nft_tproxy.ko.zst: kernel/net/ipv4/netfilter/nf_tproxy_ipv4.ko.zst\nkernel/net/netfilter/nft_socket.ko.xz:\nkernel/net/netfilter/nft_reject_inet.ko:\n",
		}, nil},
		{"none of them", map[string]string{
			mods + "modules.dep":     "kernel/net/netfilter/nf_tables.ko:\n",
			mods + "modules.builtin": "kernel/net/netfilter/nft_reject_inet.ko\n",
		}, []string{"nft_tproxy", "nft_socket"}},
		{"loaded and built in", map[string]string{
			"proc/modules":           "nft_socket 16384 0 - Live 0x0\nnft_tproxy 16384 0 - Live 0x0\n",
			mods + "modules.builtin": "kernel/net/netfilter/nft_reject_inet.ko\n",
		}, nil},
		{"no modules, config says built in", map[string]string{
			"proc/config.gz": "CONFIG_NFT_TPROXY=y\nCONFIG_NFT_SOCKET=y\nCONFIG_NFT_REJECT_INET=y\n",
		}, nil},
		{"no modules, config lacks them", map[string]string{
			"proc/config.gz": "CONFIG_NFT_TPROXY=y\n# CONFIG_NFT_SOCKET is not set\nCONFIG_NFT_REJECT_INET=y\n",
		}, []string{"nft_socket"}},
		{"modular but the module files are gone", map[string]string{
			"proc/modules":   "nf_tables 16384 0 - Live 0x0\n",
			"proc/config.gz": "CONFIG_NFT_TPROXY=m\nCONFIG_NFT_SOCKET=m\nCONFIG_NFT_REJECT_INET=y\n",
		}, []string{"nft_tproxy", "nft_socket"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := missingModules(kernel(t, tc.files), rel)
			if !slices.Equal(got, tc.want) {
				t.Errorf("missingModules = %q, want %q", got, tc.want)
			}
		})
	}
}
