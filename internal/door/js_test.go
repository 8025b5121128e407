package door

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/murmur/mur/internal/manifest"
)

// TestJSClient runs tools/a2a-js/door-client.mjs, the official A2A JS
// client, against three doors. It needs node and the pinned package
// (scripts/setup.d/50-a2a-js.sh) and runs when MUR_TEST_A2A_JS=1
// (make test-door-js).
func TestJSClient(t *testing.T) {
	if os.Getenv("MUR_TEST_A2A_JS") != "1" {
		t.Skip("set MUR_TEST_A2A_JS=1 (make test-door-js) to drive the door with @a2a-js/sdk")
	}
	dir, err := filepath.Abs("../../tools/a2a-js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk")); err != nil {
		t.Fatalf("@a2a-js/sdk is not installed: run scripts/setup.d/50-a2a-js.sh (%v)", err)
	}
	public := open(t, queueSleep, nil)
	auth, err := MintAuth(&manifest.Authentication{Scheme: "bearer", Credentials: map[string]*manifest.Credential{
		"sender":  {Scopes: []string{"SendMessage", "GetTask", "ListTasks"}},
		"watcher": {Scopes: []string{"GetTask", "murmur.WatchSession"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	authed := open(t, queueSleep, func(c *Config) { c.Auth = auth })
	peerless := open(t, queueSleep, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "door-client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"DOOR_URL="+public.door.URL(),
		"AUTH_URL="+authed.door.URL(),
		"AUTH_SENDER="+auth.Credentials["sender"].Token,
		"AUTH_WATCHER="+auth.Credentials["watcher"].Token,
		"PEERLESS_URL="+peerless.door.URL(),
	)
	out, err := cmd.CombinedOutput()
	t.Logf("door-client.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the JS client's checks failed: %v", err)
	}
}
