package driver

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func collect(t *testing.T, r io.Reader) ([]Event, error) {
	t.Helper()
	var out []Event
	for ev, err := range Events(r) {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

func TestEvents(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{"one", "data: hi\n\n", []Event{{Type: "message", Data: "hi"}}},
		{"typed, multi-line", "event: delta\ndata: a\ndata: b\n\n", []Event{{Type: "delta", Data: "a\nb"}}},
		{"comment and no space", ": ping\ndata:x\n\n", []Event{{Type: "message", Data: "x"}}},
		{"CRLF and CR", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []Event{{Type: "message", Data: "a"}, {Type: "message", Data: "b"}, {Type: "message", Data: "c"}}},
		{"no data is not dispatched", "event: x\n\ndata: y\n\n", []Event{{Type: "message", Data: "y"}}},
		{"id carries forward, retry", "id: 1\nretry: 250\ndata: a\n\ndata: b\n\n", []Event{{Type: "message", Data: "a", ID: "1", Retry: 250}, {Type: "message", Data: "b", ID: "1"}}},
		{"unterminated last event is dropped", "data: a\n\ndata: b", []Event{{Type: "message", Data: "a"}}},
		{"BOM", "\ufeffdata: a\n\n", []Event{{Type: "message", Data: "a"}}},
		{"empty data line", "data\n\n", []Event{{Type: "message", Data: ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(t, strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			// Arrival in one-byte reads, as a slow stream delivers it,
			// gives the same events.
			got, err = collect(t, iotest.OneByteReader(strings.NewReader(tt.in)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("one byte at a time: got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEventsError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom))
	got, err := collect(t, r)
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Errorf("got %v, %v; want one event then boom", got, err)
	}
}

func TestEventsStopEarly(t *testing.T) {
	n := 0
	for range Events(strings.NewReader("data: a\n\ndata: b\n\n")) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("iterated %d times after break", n)
	}
}

func FuzzEvents(f *testing.F) {
	for _, s := range []string{"data: hi\n\n", "event: x\r\ndata: y\r\n\r\n", ":c\n", "id: \x00\n", "retry: -1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for ev, err := range Events(strings.NewReader(s)) {
			if err != nil {
				return
			}
			if ev.Type == "" {
				t.Fatal("event with empty type")
			}
		}
	})
}
