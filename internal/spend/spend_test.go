package spend

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestSessionCeiling(t *testing.T) {
	c := NewSessionCeiling(1000)
	r1, err := c.Admit(600) // reserved 600
	if err != nil {
		t.Fatal(err)
	}
	// In flight: 600 reserved, so 500 more does not fit.
	if _, err := c.Admit(500); !errors.Is(err, ErrCeiling) {
		t.Fatalf("err = %v", err)
	}
	// The refusal latched: even a tiny call is refused now.
	r1.Settle(100)
	_, err = c.Admit(1)
	var ref *Refusal
	if !errors.As(err, &ref) || !ref.Latched || ref.Limit != LimitSession {
		t.Fatalf("err = %v", err)
	}
	if c.Used() != 100 {
		t.Fatalf("used = %d", c.Used())
	}
}

func TestSessionCeilingSettleReleases(t *testing.T) {
	c := NewSessionCeiling(1000)
	for i := 0; i < 5; i++ {
		r, err := c.Admit(900)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		r.Settle(20)
	}
	if c.Used() != 100 {
		t.Fatalf("used = %d", c.Used())
	}
	if _, err := c.Admit(901); err == nil {
		t.Fatal("901 over 100 used fits 1000")
	}
}

func TestRefusalText(t *testing.T) {
	r := &Refusal{Limit: LimitSession, Ceiling: 10, Used: 8, Needed: 5}
	want := "spend ceiling reached: inference.max_session_tokens is 10 tokens, 8 used, the next call needs 5; retrying will not get past it"
	if r.Error() != want {
		t.Fatalf("%q", r.Error())
	}
}

func TestMachineMeterSharedAndPersistent(t *testing.T) {
	path := MeterPath(t.TempDir())
	a := NewMachineMeter(path, 1000)
	b := NewMachineMeter(path, 1000) // another run on the machine
	ra, err := a.Admit(700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Admit(400); !errors.Is(err, ErrCeiling) {
		t.Fatalf("b admitted past a's reservation: %v", err)
	}
	ra.Settle(300)
	rb, err := b.Admit(400)
	if err != nil {
		t.Fatal(err)
	}
	rb.Settle(400)
	// A restart: a fresh meter reads the day's count from the file.
	c := NewMachineMeter(path, 1000)
	if used, _ := c.Used(); used != 700 {
		t.Fatalf("used after restart = %d", used)
	}
}

func TestMachineMeterDropsDeadReservationsAndRollsDay(t *testing.T) {
	path := MeterPath(t.TempDir())
	day := time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)
	m := NewMachineMeter(path, 1000)
	m.now = func() time.Time { return day }
	m.pid = 1 << 30 // no such process
	if _, err := m.Admit(900); err != nil {
		t.Fatal(err)
	}
	live := NewMachineMeter(path, 1000)
	live.now = m.now
	if _, err := live.Admit(900); err != nil {
		t.Fatalf("a dead run's reservation still held: %v", err)
	}
	// Charged on the test's day, by its clock: a meter on the real clock
	// would charge whatever day the test happens to run on.
	other := NewMachineMeter(path, 5000)
	other.now = m.now
	r, _ := other.Admit(10)
	r.Settle(950)
	next := NewMachineMeter(path, 1000)
	next.now = func() time.Time { return day.Add(2 * time.Hour) }
	if used, _ := next.Used(); used != 0 {
		t.Fatalf("new UTC day used = %d", used)
	}
}

func TestMachineMeterConcurrent(t *testing.T) {
	path := MeterPath(t.TempDir())
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := NewMachineMeter(path, 1000)
			if r, err := m.Admit(100); err == nil {
				r.Settle(100)
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if admitted != 10 {
		t.Fatalf("admitted %d calls of 100 under 1000", admitted)
	}
}

func TestMachineMeterCorrupt(t *testing.T) {
	path := MeterPath(t.TempDir())
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("{"), 0o600)
	if _, err := NewMachineMeter(path, 10).Admit(1); err == nil {
		t.Fatal("corrupt meter admitted a call")
	}
}

func TestAdmitAllReleasesOnRefusal(t *testing.T) {
	s := NewSessionCeiling(1000)
	m := NewMachineMeter(MeterPath(t.TempDir()), 50)
	if _, err := Admit(100, s, m); !errors.Is(err, ErrCeiling) {
		t.Fatalf("err = %v", err)
	}
	if s.reserved != 0 {
		t.Fatalf("session still holds %d", s.reserved)
	}
}
