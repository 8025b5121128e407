package timeline

import (
	"bytes"
	"errors"
	"testing"

	"github.com/murmur/mur/internal/trace"
)

// FuzzRead: any file is either refused as malformed (naming a line) or
// read into a timeline whose steps and comparison with itself hold.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"event":"session_start","ts":"2026-12-01T10:00:00Z","session_id":"ses_a"}` + "\n" +
		`{"event":"inference","ts":"2026-12-01T10:00:01Z","task_id":"t","turn":1,"duration_ms":5}` + "\n" +
		`{"event":"tool_call","ts":"2026-12-01T10:00:01Z","task_id":"t","turn":2,"tool":"x"}` + "\n"))
	f.Add([]byte(`{"event":"retention","ts":"2026-12-01T10:00:00Z","x":[1,{"y":null}]}`))
	f.Add([]byte("not json\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Read(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, trace.ErrMalformed) && s != nil {
				t.Fatalf("error %v with a timeline", err)
			}
			return
		}
		if d := Compare(s, s); !d.Same {
			t.Fatalf("a session differs from itself at %d", d.At)
		}
	})
}
