package spend

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestMachineMeterKilledMidUpdate kills a process charging the meter in a
// tight loop with SIGKILL at random moments, many times: after every kill
// the file must read back whole, and the day's count must never go down.
func TestMachineMeterKilledMidUpdate(t *testing.T) {
	if path := os.Getenv("MUR_SPEND_KILL_CHILD"); path != "" {
		m := NewMachineMeter(path, 1<<60)
		fmt.Println("ready")
		for {
			r, err := m.Admit(1)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Settle(1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if testing.Short() {
		t.Skip("kills 40 subprocesses")
	}
	path := MeterPath(t.TempDir())
	var last int64
	for i := range 40 {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMachineMeterKilledMidUpdate$")
		cmd.Env = append(os.Environ(), "MUR_SPEND_KILL_CHILD="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := io.ReadFull(out, buf); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
		time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
		cmd.Process.Kill()
		cmd.Wait()
		used, err := NewMachineMeter(path, 1<<60).Used()
		if err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		if used < last {
			t.Fatalf("kill %d: the day's count went down from %d to %d", i, last, used)
		}
		last = used
	}
	if last == 0 {
		t.Fatal("no child charged anything before it was killed")
	}
}
