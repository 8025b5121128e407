package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/event"
)

func TestWriterFlushesEachLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var s event.Stream
	s.Add(w)
	s.Emit(event.Event{Type: "session_start", Fields: map[string]any{"session_id": "ses_x", "n": 3}})
	// Read before Close: the line must already be in the file.
	lines, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Event != "session_start" || lines[0].String("session_id") != "ses_x" || lines[0].Int("n") != 3 {
		t.Fatalf("got %+v", lines)
	}
	s.Emit(event.Event{Type: "session_end"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(got) != 2 || !strings.HasPrefix(got[1], `{"event":"session_end","ts":"`) {
		t.Fatalf("file = %q", b)
	}
}

func TestMarshalOrderAndReserved(t *testing.T) {
	ts := time.Date(2026, 11, 29, 20, 0, 0, 5, time.UTC)
	b, err := Marshal(event.Event{Type: "tool_call", Time: ts, Fields: map[string]any{"b": 1, "a": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event":"tool_call","ts":"2026-11-29T20:00:00.000000005Z","a":"x","b":1}` + "\n"
	if string(b) != want {
		t.Fatalf("got %s want %s", b, want)
	}
	for _, k := range []string{"event", "ts"} {
		_, err := Marshal(event.Event{Type: "x", Time: ts, Fields: map[string]any{k: 1}})
		if !errors.Is(err, ErrReservedField) {
			t.Errorf("field %q: err = %v", k, err)
		}
	}
}

func TestReadMalformed(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"good", `{"event":"a","ts":"2026-01-01T00:00:00Z"}` + "\n\n", true},
		{"not json", "nope\n", false},
		{"array", "[1]\n", false},
		{"null", "null\n", false},
		{"no event", `{"ts":"2026-01-01T00:00:00Z"}`, false},
		{"empty event", `{"event":"","ts":"2026-01-01T00:00:00Z"}`, false},
		{"bad ts", `{"event":"a","ts":"yesterday"}`, false},
		{"cut short", `{"event":"a","ts":"2026-01-01T00:00:00Z"}` + "\n" + `{"event":"b","t`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in))
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestRecorderLevels(t *testing.T) {
	body := []byte("hello")
	const sum = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	tests := []struct {
		level    Capture
		hash     string
		blobFile bool
	}{
		{CaptureNone, "", false},
		{CaptureMeta, sum, false},
		{CaptureContent, sum, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.level), func(t *testing.T) {
			dir := t.TempDir()
			r := Recorder{Level: tt.level, BlobDir: dir}
			h, err := r.Hash(body)
			if err != nil || h != tt.hash {
				t.Fatalf("hash = %q, %v", h, err)
			}
			_, err = os.Stat(filepath.Join(dir, sum))
			if (err == nil) != tt.blobFile {
				t.Fatalf("blob present = %v", err == nil)
			}
			if tt.blobFile {
				// A second write of the same body is a no-op.
				if _, err := r.Hash(body); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestParseCapture(t *testing.T) {
	if c, _ := ParseCapture(""); c != CaptureMeta {
		t.Fatalf("default = %q", c)
	}
	if _, err := ParseCapture("all"); !errors.Is(err, ErrCapture) {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"event":"inference","ts":"2026-11-29T20:00:00.123Z","input_tokens":12,"message_shas":["ab"]}`))
	f.Add([]byte(`{"event":"x","ts":"2026-11-29T20:00:00Z"}`))
	f.Add([]byte(`{"event":1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"event":"a","ts":"2026-11-29T20:00:00Z","event":"b"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLine(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		// A parsed line re-marshals to a line that parses to the same event.
		fields := map[string]any{}
		for k, v := range l.Fields {
			fields[k] = v
		}
		out, err := Marshal(event.Event{Type: l.Event, Time: l.Time, Fields: fields})
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		l2, err := ParseLine(out[:len(out)-1])
		if err != nil || l2.Event != l.Event || !l2.Time.Equal(l.Time) || len(l2.Fields) != len(l.Fields) {
			t.Fatalf("round trip: %v %+v %+v", err, l, l2)
		}
	})
}

// TestBlobFailureKept: a blob that cannot be written is an error for the
// caller and, whether the caller keeps it or not, for the session's end.
func TestBlobFailureKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "blobs")
	if err := os.WriteFile(dir, nil, 0o600); err != nil { // a file where the directory should be
		t.Fatal(err)
	}
	r := Recorder{Level: CaptureContent, BlobDir: dir}
	if _, err := r.Hash([]byte("body")); err == nil {
		t.Fatal("Hash wrote a blob into a file")
	}
	_, _ = r.Hash([]byte("second"))
	err := TakeBlobErr(dir)
	if err == nil || !strings.Contains(err.Error(), "records: ") {
		t.Fatalf("TakeBlobErr = %v, want the first failure", err)
	}
	if TakeBlobErr(dir) != nil {
		t.Fatal("TakeBlobErr did not forget the failure")
	}
	ok := Recorder{Level: CaptureContent, BlobDir: t.TempDir()}
	if _, err := ok.Hash([]byte("body")); err != nil || TakeBlobErr(ok.BlobDir) != nil {
		t.Fatalf("a written blob left an error: %v", err)
	}
}
