package conversation

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/murmur/mur/internal/infer"
)

// crashDirEnv makes the test binary the writer TestKillMidWrite kills.
const crashDirEnv = "MUR_CONVERSATION_CRASH_DIR"

// TestCrashWriter is the child of TestKillMidWrite: it appends large
// messages to one record until it is killed.
func TestCrashWriter(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("the writer TestKillMidWrite starts and kills")
	}
	s := Store{Dir: dir, Capsule: "cap", Owns: true}
	l, err := s.Open("ctx")
	if err != nil {
		t.Fatal(err)
	}
	// Lines of a few MiB take long enough to write that a kill often lands
	// inside one.
	body := strings.Repeat("x", 3<<20)
	for {
		if _, err := l.Append(Entry{Message: text(infer.RoleAssistant, body)}); err != nil {
			t.Fatal(err)
		}
	}
}

// A writer killed with SIGKILL at random points never leaves a record that
// fails to read: at most the message being written is lost, and the next
// writer appends after the last whole message with the next id.
func TestKillMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills writer processes")
	}
	dir := t.TempDir()
	s := Store{Dir: dir, Capsule: "cap", Owns: true}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	torn, last := 0, int64(0)
	for round := range 12 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(30+rng.IntN(200)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		rec, err := ReadFile(s.Path("ctx"))
		if err != nil {
			t.Fatalf("round %d: the record does not read after a kill: %v", round, err)
		}
		if rec.Torn {
			torn++
		}
		if rec.LastID() < last {
			t.Fatalf("round %d: messages went missing: last id %d, was %d", round, rec.LastID(), last)
		}
		// The next writer follows the last whole message.
		l, err := s.Open("ctx")
		if err != nil {
			t.Fatal(err)
		}
		e, err := l.Append(Entry{Message: text(infer.RoleUser, "after the kill")})
		l.Close()
		if err != nil || e.ID != rec.LastID()+1 {
			t.Fatalf("round %d: appended %d (%v), after %d", round, e.ID, err, rec.LastID())
		}
		after, err := ReadFile(s.Path("ctx"))
		if err != nil || after.Torn || after.LastID() != e.ID || after.Entries[len(after.Entries)-1].Message.Content[0].Text != "after the kill" {
			t.Fatalf("round %d: after the repair: torn %v, last %d, %v", round, after.Torn, after.LastID(), err)
		}
		last = e.ID
	}
	t.Logf("12 kills, %d landed inside a line; %d messages survive", torn, last)
}
