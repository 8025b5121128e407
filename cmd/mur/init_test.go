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
// The largest is santhosh-tekuri/jsonschema compiling its drafts'
// meta-schemas (1.7 MB, ~11 ms of a ~21 ms start; docs/RATIONALE.md says
// why it stays); the budget catches the next one.
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
	}
	if seen < 50 {
		t.Fatalf("read %d init lines from inittrace; output:\n%s", seen, stderr.String())
	}
	// mur's inits allocated 2.8 MB in all (session 7), 1.7 MB of it the
	// JSON Schema meta-schemas.
	if total > 3<<20 {
		t.Errorf("package inits allocated %d bytes in all, budget 3 MiB: find the new one with GODEBUG=inittrace=1 mur --version", total)
	}
	t.Logf("%d package inits allocated %d bytes", seen, total)
}
