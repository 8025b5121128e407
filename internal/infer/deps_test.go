package infer

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDriversLinkNoNetHTTP keeps net/http (and the TLS and socket stacks
// its init drags in) out of the driver components: it is megabytes of
// code mapped into every capsule (docs/RATIONALE.md).
func TestDriversLinkNoNetHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-deps",
		"github.com/murmur/mur/drivers/...", "github.com/murmur/mur/examples/driver-skeleton-go")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("no go command")
	}
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "net/http", "crypto/tls", "net", "net/url", "net/netip":
			t.Errorf("a driver links %s", pkg)
		}
	}
	if !strings.Contains(string(out), "github.com/murmur/mur/drivers/driver-openai") {
		t.Errorf("go list did not list the drivers:\n%s", out)
	}
}
