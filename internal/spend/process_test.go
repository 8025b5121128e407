package spend

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestMachineMeterAcrossProcesses runs admitters in separate processes (this
// test binary re-executed) against one meter file: flock, not a mutex, is
// what keeps the day's count.
func TestMachineMeterAcrossProcesses(t *testing.T) {
	if path := os.Getenv("MUR_SPEND_CHILD"); path != "" {
		m := NewMachineMeter(path, 1000)
		n := 0
		for i := 0; i < 20; i++ {
			if r, err := m.Admit(50); err == nil {
				r.Settle(50)
				n++
			}
		}
		fmt.Printf("admitted=%d\n", n)
		return
	}
	path := MeterPath(t.TempDir())
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := 0; i < 4; i++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMachineMeterAcrossProcesses$")
		cmd.Env = append(os.Environ(), "MUR_SPEND_CHILD="+path)
		out := &strings.Builder{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		outs = append(outs, out)
	}
	total := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		_, after, _ := strings.Cut(outs[i].String(), "admitted=")
		n, _ := strconv.Atoi(strings.Fields(after)[0])
		total += n
	}
	if total != 20 {
		t.Fatalf("%d calls of 50 admitted under 1000 across processes", total)
	}
	if used, _ := NewMachineMeter(path, 1000).Used(); used != 1000 {
		t.Fatalf("used %d", used)
	}
}
