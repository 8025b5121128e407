package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestInitAllocations runs this test binary (which links what mur links)
// with GODEBUG=inittrace=1 and reads what each package's init allocated.
// Every mur command pays every init before main; bytes allocated are
// deterministic where init times are not, so they are what is checked.
// santhosh-tekuri/jsonschema compiled its drafts' meta-schemas in init
// (1.7 MB, ~11 ms of a ~21 ms start); third_party/jsonschema compiles them
// at the first Compile, which only an ACT component's schemas reach.
func TestInitAllocations(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	total, seen := 0, 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		seen++
		total += b
		if f[1] == "github.com/santhosh-tekuri/jsonschema/v6" && b > 64<<10 {
			t.Errorf("jsonschema's init allocated %d bytes: it compiles its meta-schemas at start again (is go.mod's replace to third_party/jsonschema gone?)", b)
		}
	}
	if seen < 50 {
		t.Fatalf("read %d init lines from inittrace; output:\n%s", seen, stderr.String())
	}
	// mur's inits allocated 1.1 MB in all after the change (2.8 MB before).
	if total > 2<<20 {
		t.Errorf("package inits allocated %d bytes in all, budget 2 MiB: find the new one with GODEBUG=inittrace=1 mur --version", total)
	}
	t.Logf("%d package inits allocated %d bytes", seen, total)
}
