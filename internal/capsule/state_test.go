package capsule_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const stateManifest = `name: keeper
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: %ENDPOINT%/v1
      keyless: true
  - name: murmur/file-go
    version: "0.1.0"
%STATE%
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
  max_turns: 3
`

// TestToolState: a WASM tool granted capabilities.state reaches
// ~/.murmur/state/<store>/ as state/: what one session writes there the
// next session, in a fresh work folder, reads back. The store defaults
// to the capsule's name; store: names another. Without the grant, state/
// is only a folder of the session's own work folder.
func TestToolState(t *testing.T) {
	write := `{"op":"write","path":"state/notes.txt","content":"kept across sessions"}`
	read := `{"op":"read","path":"state/notes.txt"}`
	for _, tc := range []struct {
		name, grant, store string
	}{
		{"capsule name", "    capabilities:\n      state: {}", "keeper"},
		{"named store", "    capabilities:\n      state:\n        store: shey", "shey"},
		{"not granted", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, home := importsHome(t)
			publish(t, root, "../../examples/file-go", "file-go")
			m := strings.ReplaceAll(stateManifest, "%STATE%", tc.grant)
			got, _ := runCall(t, root, home, m, "file-go", write)
			if !strings.Contains(got, "wrote state/notes.txt") {
				t.Fatalf("the write failed: %s", got)
			}
			got, _ = runCall(t, root, home, m, "file-go", read)
			kept := filepath.Join(home, ".murmur", "state", tc.store, "notes.txt")
			b, err := os.ReadFile(kept)
			if tc.store == "" {
				if strings.Contains(got, "kept across sessions") {
					t.Errorf("an ungranted tool read another session's file: %s", got)
				}
				if entries, _ := os.ReadDir(filepath.Join(home, ".murmur", "state")); len(entries) != 0 {
					t.Errorf("an ungranted tool created stores: %v", entries)
				}
				return
			}
			if !strings.Contains(got, "kept across sessions") {
				t.Errorf("the second session did not read the first's note: %s", got)
			}
			if err != nil || string(b) != "kept across sessions" {
				t.Errorf("%s = %q, %v", kept, b, err)
			}
			if fi, err := os.Stat(filepath.Dir(kept)); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("store folder: %v %v, want mode 0700", fi, err)
			}
		})
	}
}

// publishNotes publishes murmur/notes: a native tool (a shell script)
// that, called with "write", writes a note into $MURMUR_STATE_DIR and
// tries to write into the store beside it; called otherwise, reads the
// note back.
func publishNotes(t *testing.T, root string) {
	t.Helper()
	own := "name: notes\nversion: \"0.1.0\"\ndescription: Keeps a note.\nruntime: tool\nimplementation: native\nrequires_files: [notes.sh]\n"
	script := `#!/bin/sh
[ -n "$MURMUR_STATE_DIR" ] || { echo "no MURMUR_STATE_DIR"; exit 0; }
case "$1" in
*write*)
	echo "kept across sessions" > "$MURMUR_STATE_DIR/notes.txt" && echo "wrote"
	if echo x 2>/dev/null > "$MURMUR_STATE_DIR/../other/x"; then echo "reached another store"; fi ;;
*) cat "$MURMUR_STATE_DIR/notes.txt" ;;
esac
`
	publishDir(t, root, "notes", map[string][]byte{"murmur.yaml": []byte(own), "notes.sh": []byte(script)}, "notes.sh")
}

// TestNativeToolState: a native tool granted capabilities.state gets the
// store's absolute path as MURMUR_STATE_DIR, and the session's sandbox
// lets it write there and nowhere else under ~/.murmur/state: the next
// session reads the note back. Without the grant the variable is absent.
func TestNativeToolState(t *testing.T) {
	manifest := func(grant string) string {
		return strings.NewReplacer("murmur/file-go", "murmur/notes", "%STATE%", grant).Replace(stateManifest)
	}
	t.Run("granted", func(t *testing.T) {
		root, home := importsHome(t)
		publishNotes(t, root)
		if err := os.MkdirAll(filepath.Join(home, ".murmur", "state", "other"), 0o700); err != nil {
			t.Fatal(err)
		}
		m := manifest("    capabilities:\n      state: {}")
		got, _ := runCall(t, root, home, m, "notes", `{"op":"write"}`)
		if !strings.Contains(got, "wrote") {
			t.Fatalf("the write failed: %s", got)
		}
		if strings.Contains(got, "reached another store") {
			t.Errorf("the tool wrote into another store: %s", got)
		}
		got, _ = runCall(t, root, home, m, "notes", `{"op":"read"}`)
		if !strings.Contains(got, "kept across sessions") {
			t.Errorf("the second session did not read the first's note: %s", got)
		}
		if b, err := os.ReadFile(filepath.Join(home, ".murmur", "state", "keeper", "notes.txt")); err != nil || !strings.Contains(string(b), "kept") {
			t.Errorf("store file: %q %v", b, err)
		}
	})
	t.Run("not granted", func(t *testing.T) {
		root, home := importsHome(t)
		publishNotes(t, root)
		got, _ := runCall(t, root, home, manifest(""), "notes", `{"op":"write"}`)
		if !strings.Contains(got, "no MURMUR_STATE_DIR") {
			t.Errorf("an ungranted native tool saw a store: %s", got)
		}
	})
}
