package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/door"
)

// A registered session whose door does not answer is listed unreachable,
// with the error, rather than hanging or vanishing.
func TestPsUnreachable(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	reg, err := door.Register(filepath.Join(home, ".murmur"), door.Running{Session: "ses_gone", Capsule: "c", URL: "http://127.0.0.1:1", PID: os.Getpid(), Token: "mur_x"})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"ps", "--json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("mur ps exit %d: %s", code, errb.String())
	}
	var got []psEntry
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(got) != 1 || got[0].Session != "ses_gone" || got[0].State != "unreachable" || got[0].Error == "" {
		t.Fatalf("mur ps --json = %+v, want ses_gone unreachable with its error", got)
	}
	if strings.Contains(out.String(), "mur_x") {
		t.Error("mur ps printed the operator token")
	}
}
