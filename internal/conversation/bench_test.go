package conversation

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/murmur/mur/internal/infer"
)

// BenchmarkAppend is one message appended to a record (issue #15: ≤ 50 µs
// per message): marshal, lock, the one write, unlock.
func BenchmarkAppend(b *testing.B) {
	s := Store{Dir: b.TempDir(), Capsule: "cap", Owns: true}
	l, err := s.Open("ctx")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	m := text(infer.RoleAssistant, strings.Repeat("a reply of ordinary length. ", 20))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append(Entry{SessionID: "ses_x", TaskID: "tsk_x", Message: m}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad10k reads a 10,000-message record, as a threaded task or
// mur run --context starts from it (issue #15: ≤ 50 ms).
func BenchmarkLoad10k(b *testing.B) {
	s := Store{Dir: b.TempDir(), Capsule: "cap", Owns: true}
	l, err := s.Open("ctx")
	if err != nil {
		b.Fatal(err)
	}
	appendN(b, l, 10000, strings.Repeat("a message of ordinary length. ", 10))
	l.Close()
	b.ReportAllocs()
	// CPU time per load (user+sys of the process, every decoding core):
	// on a shared machine the wall time measures the load, this does not.
	before := cpuTime()
	for b.Loop() {
		rec, err := ReadFile(s.Path("ctx"))
		if err != nil || len(rec.Messages()) != 10000 {
			b.Fatal(len(rec.Entries), err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user+sys CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
