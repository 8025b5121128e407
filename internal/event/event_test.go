package event

import (
	"sync"
	"testing"
	"time"
)

func TestStreamOrderAndTimestamp(t *testing.T) {
	var s Stream
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.now = func() time.Time { return fixed }
	var a, b []string
	s.Add(SinkFunc(func(e Event) { a = append(a, e.Type) }))
	s.Add(SinkFunc(func(e Event) {
		b = append(b, e.Type)
		if !e.Time.Equal(fixed) {
			t.Errorf("event %s time = %v, want %v", e.Type, e.Time, fixed)
		}
	}))
	s.Emit(Event{Type: "session_start"})
	s.Emit(Event{Type: "task_start"})
	if len(a) != 2 || a[0] != "session_start" || a[1] != "task_start" {
		t.Fatalf("first sink saw %v", a)
	}
	if len(b) != 2 || b[1] != "task_start" {
		t.Fatalf("second sink saw %v", b)
	}
}

func TestStreamKeepsGivenTime(t *testing.T) {
	var s Stream
	given := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var got time.Time
	s.Add(SinkFunc(func(e Event) { got = e.Time }))
	s.Emit(Event{Type: "x", Time: given})
	if !got.Equal(given) {
		t.Fatalf("time = %v, want %v", got, given)
	}
}

func TestStreamConcurrentEmitsAreSerialised(t *testing.T) {
	var s Stream
	n := 0
	s.Add(SinkFunc(func(Event) { n++ })) // would race without the stream's lock
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				s.Emit(Event{Type: "tick"})
			}
		}()
	}
	wg.Wait()
	if n != 800 {
		t.Fatalf("n = %d, want 800", n)
	}
}

func TestSubscribeCancelStopsDelivery(t *testing.T) {
	var s Stream
	var a, b []string
	s.Add(SinkFunc(func(e Event) { a = append(a, e.Type) }))
	cancel := s.Subscribe(SinkFunc(func(e Event) { b = append(b, e.Type) }))
	s.Emit(Event{Type: "one"})
	cancel()
	cancel() // a second cancel is harmless
	s.Emit(Event{Type: "two"})
	if len(a) != 2 || len(b) != 1 || b[0] != "one" {
		t.Fatalf("kept sink saw %v, canceled sink saw %v", a, b)
	}
}

func TestRecordedDropsLiveEvents(t *testing.T) {
	var got []string
	k := Recorded(SinkFunc(func(e Event) { got = append(got, e.Type) }))
	k.Emit(Event{Type: TextDelta, Live: true})
	k.Emit(Event{Type: "tool_call"})
	if len(got) != 1 || got[0] != "tool_call" {
		t.Fatalf("recorded %v", got)
	}
}
