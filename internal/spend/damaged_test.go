package spend

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/diag"
)

// TestMachineMeterDamagedRefuses: a meter file the meter cannot have
// written is refused with E-SPEND-001 naming the file, by every reader, and
// is left as it was for the operator to inspect; it is never read as 0.
func TestMachineMeterDamagedRefuses(t *testing.T) {
	cases := map[string]string{
		"empty":           "",
		"truncated":       `{"day":"2026-12-01","us`,
		"no day":          `{"used":5}`,
		"bad day":         `{"day":"yesterday","used":5}`,
		"negative used":   `{"day":"2026-12-01","used":-4}`,
		"unknown field":   `{"day":"2026-12-01","used":5,"spent":9}`,
		"trailing data":   `{"day":"2026-12-01","used":5}{}`,
		"bad reservation": `{"day":"2026-12-01","used":5,"reserved":[{"id":"1-1","pid":0,"tokens":3,"day":"2026-12-01"}]}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := MeterPath(t.TempDir())
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			m := NewMachineMeter(path, 1000)
			_, admitErr := m.Admit(1)
			_, usedErr := m.Used()
			for _, err := range []error{admitErr, usedErr} {
				var d diag.Diagnostic
				if !errors.As(err, &d) || d.Code != diag.SpendMeter || d.Pos.File != path {
					t.Fatalf("err = %v, want %s naming %s", err, diag.SpendMeter, path)
				}
				if !strings.Contains(d.Msg, "delete the file") {
					t.Fatalf("the refusal does not say what to do: %s", d.Msg)
				}
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Fatalf("the damaged file was rewritten to %q", b)
			}
		})
	}
}

// TestMachineMeterReplacesByRename: an update never writes into the file
// a reader may hold; it renames a new one over it. A hard link to the old
// file keeps the old content, which an in-place rewrite would change.
func TestMachineMeterReplacesByRename(t *testing.T) {
	path := MeterPath(t.TempDir())
	m := NewMachineMeter(path, 1000)
	r, err := m.Admit(10)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := path + ".old"
	if err := os.Link(path, old); err != nil {
		t.Fatal(err)
	}
	if err := r.Settle(7); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != string(before) {
		t.Fatalf("the meter was rewritten in place: the old file now reads %s", b)
	}
	if used, err := m.Used(); err != nil || used != 7 {
		t.Fatalf("used = %d, %v", used, err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

// FuzzMeterDecode: whatever the meter file holds, the meter either refuses
// it with E-SPEND-001 or reads a day and a count it could have written.
func FuzzMeterDecode(f *testing.F) {
	f.Add([]byte(`{"day":"2026-12-01","used":5,"reserved":[{"id":"1-1","pid":1,"tokens":3,"day":"2026-12-01"}]}`))
	f.Add([]byte(`{"day":"2026-12-01","used":5}`))
	f.Add([]byte(""))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := NewMachineMeter("/nonexistent/machine-tokens.json", 1)
		var mf meterFile
		err := m.decode(b, &mf)
		if err != nil {
			var d diag.Diagnostic
			if !errors.As(err, &d) || d.Code != diag.SpendMeter {
				t.Fatalf("refused without E-SPEND-001: %v", err)
			}
			return
		}
		if _, perr := time.Parse(time.DateOnly, mf.Day); perr != nil || mf.Used < 0 {
			t.Fatalf("read %+v from %q", mf, b)
		}
		for _, r := range mf.Reserved {
			if r.Tokens < 0 || r.PID <= 0 {
				t.Fatalf("read reservation %+v from %q", r, b)
			}
		}
	})
}

// damagingRefuser refuses every call after damaging the machine meter's
// file, so the meter cannot release what it reserved for the call.
type damagingRefuser struct{ path string }

func (d damagingRefuser) Admit(need int64) (Reservation, error) {
	if err := os.WriteFile(d.path, []byte("{"), 0o600); err != nil {
		return nil, err
	}
	return nil, &Refusal{Limit: LimitSession, Ceiling: 1, Needed: need}
}

// TestAdmitReportsFailedRelease: a refusal by a later ceiling releases
// what the earlier ones reserved; a release that fails is reported with
// the refusal instead of being dropped.
func TestAdmitReportsFailedRelease(t *testing.T) {
	path := MeterPath(t.TempDir())
	_, err := Admit(10, NewMachineMeter(path, 1000), damagingRefuser{path})
	var ref *Refusal
	var d diag.Diagnostic
	if !errors.As(err, &ref) || !errors.As(err, &d) || d.Code != diag.SpendMeter {
		t.Fatalf("err = %v, want the refusal and the meter's E-SPEND-001", err)
	}
}
