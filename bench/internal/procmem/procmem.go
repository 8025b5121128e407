// Package procmem reads a process tree's memory from /proc for the
// benchmarks (doorbench, launchbench, treepss), one copy of the readers.
package procmem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Descendants returns pid and every process below it.
func Descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The parent pid is the second field after the command's ")".
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], child)
			}
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// Rollup reads /proc/<pid>/smaps_rollup's kB fields; a process gone
// reads as no fields.
func Rollup(pid int) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}
