package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

const hybridMountinfo = `25 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
32 30 0:28 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
33 30 0:29 /nested /sys/fs/cgroup/pids\040x rw - cgroup cgroup rw,pids
`

func TestParseMountinfo(t *testing.T) {
	ms := parseMountinfo(hybridMountinfo)
	if len(ms) != 3 || !ms[0].v2 || ms[0].dir != "/sys/fs/cgroup/unified" {
		t.Fatalf("mounts = %+v", ms)
	}
	if !ms[1].options["memory"] || ms[2].dir != "/sys/fs/cgroup/pids x" || ms[2].root != "/nested" {
		t.Fatalf("v1 mounts = %+v", ms[1:])
	}
	if got := joinCgroup(ms[2], "/nested/a"); got != "/sys/fs/cgroup/pids x/a" {
		t.Fatalf("joinCgroup = %q", got)
	}
}

func TestParseProcCgroup(t *testing.T) {
	got := parseProcCgroup("4:memory:/a/b\n2:cpu,cpuacct:/c\n0::/\n")
	want := map[string]string{"memory": "/a/b", "cpu": "/c", "cpuacct": "/c", "": "/"}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%q = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add(hybridMountinfo)
	f.Add(`1 2 3 \ / - cgroup x \12`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range parseMountinfo(s) {
			_ = joinCgroup(m, "/x")
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	f.Add("4:memory:/a/b\n0::/\n")
	f.Fuzz(func(t *testing.T, s string) { _ = parseProcCgroup(s) })
}

func TestProbeCgroupsPlacesScope(t *testing.T) {
	mk := func(t *testing.T, files map[string]string) string {
		root := t.TempDir()
		for p, v := range files {
			full := filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	tests := []struct {
		name    string
		files   map[string]string
		own     string
		wantDir string
		want    string // memory's placement
	}{
		{"own cgroup delegates", map[string]string{
			"cgroup.controllers": "memory pids", "app/cgroup.subtree_control": "memory pids io",
		}, "/app", "app", "v2"},
		{"systemd scope falls back to root", map[string]string{
			"cgroup.controllers": "cpu io memory pids", "user.slice/s.scope/cgroup.subtree_control": "",
		}, "/user.slice/s.scope", "", "v2"},
		{"nothing anywhere", map[string]string{
			"cgroup.controllers": "hugetlb", "x/cgroup.subtree_control": "",
		}, "/x", "x", ""},
		{"at the root", map[string]string{"cgroup.controllers": "memory pids"}, "/", "", "v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := mk(t, tt.files)
			h := Host{Controllers: map[string]string{}, Why: map[string]string{}}
			probeCgroupsFrom(&h, []cgroupMount{{dir: root, root: "/", v2: true}}, map[string]string{"": tt.own})
			if want := filepath.Join(root, tt.wantDir); h.CgroupV2 != want {
				t.Fatalf("scope parent %q, want %q", h.CgroupV2, want)
			}
			if h.Controllers["memory"] != tt.want || h.Controllers["pids"] != tt.want {
				t.Fatalf("controllers %v, want memory and pids %q", h.Controllers, tt.want)
			}
		})
	}
}
