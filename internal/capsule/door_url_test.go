package capsule

import (
	"testing"

	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
)

// TestShellPolicyCapsuleURL: a session that serves a door gives its shell
// commands MURMUR_CAPSULE_URL among the identity rows (spec 004, process
// environment row 2); one without a door gives none.
func TestShellPolicyCapsuleURL(t *testing.T) {
	c := &manifest.Capsule{Name: "cap", Version: "1.0.0", Inference: &manifest.Inference{}}
	d := session.Dirs{ID: "ses_x"}
	find := func(p [][2]string) string {
		for _, kv := range p {
			if kv[0] == "MURMUR_CAPSULE_URL" {
				return kv[1]
			}
		}
		return ""
	}
	if got := find(shellPolicy(c, d, "http://127.0.0.1:4100").Identity); got != "http://127.0.0.1:4100" {
		t.Fatalf("MURMUR_CAPSULE_URL = %q", got)
	}
	if got := find(shellPolicy(c, d, "").Identity); got != "" {
		t.Fatalf("MURMUR_CAPSULE_URL = %q without a door", got)
	}
}
