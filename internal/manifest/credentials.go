package manifest

import (
	"fmt"
	"strings"

	"github.com/murmur/mur/internal/diag"
)

// Where a gateway's key comes from. Only names are ever reported, never
// values.
const (
	KeyFromConfig     = "config"     // credentials.NAME in ~/.murmur/config.yaml
	KeyFromEnv        = "env"        // the environment variable NAME
	KeyLiteral        = "literal"    // written in the manifest
	KeyKeyless        = "keyless"    // keyless: true
	KeyFromController = "controller" // listed in control.secrets
	KeyUnset          = "unset"      // found nowhere
)

// CredentialStatus is how one gateway's key resolves, by name only.
type CredentialStatus struct {
	Artifact string `json:"artifact"`
	Name     string `json:"name,omitempty"` // the ${NAME}, "" for a literal or keyless
	Source   string `json:"source"`
	// Alternate marks an inference.alternates driver: unset, it is staged
	// unavailable (W-RUN-003) instead of refusing the launch.
	Alternate bool `json:"alternate,omitempty"`
}

// CredentialLookup says whether NAME is set in each place mur reads, in
// resolution order. It must not return values.
type CredentialLookup struct {
	Config func(name string) bool // credentials.NAME is non-empty
	Env    func(name string) bool // the environment variable is set
}

// CheckCredentials resolves every gateway key reference in the spec's
// order — config, then environment (W-SEC-027), a literal also warning
// W-SEC-027 — and refuses a reference found nowhere with E-MAN-003,
// except a name a controller supplies (control.secrets) and an alternate
// driver's, which is staged unavailable with W-RUN-003.
func CheckCredentials(c *Capsule, look CredentialLookup) ([]CredentialStatus, diag.List) {
	var out []CredentialStatus
	var ds diag.List
	supplied := map[string]bool{}
	if c.Control != nil {
		for _, s := range c.Control.Secrets {
			supplied[s] = true
		}
	}
	alt := map[string]bool{}
	primary := ""
	if in := c.Inference; in != nil && !in.IsProcess() {
		if in.Driver != nil {
			primary = in.Driver.Artifact
		}
		for _, a := range in.Alternates {
			alt[a.Driver.Artifact] = true
		}
	}
	for i, a := range c.Artifacts {
		g := a.Gateway
		if g == nil {
			continue
		}
		field := fmt.Sprintf("artifacts[%d].gateway.api_key", i)
		st := CredentialStatus{Artifact: a.Name, Alternate: alt[a.Name] && a.Name != primary}
		name, ref := g.CredentialRef()
		switch {
		case boolv(g.Keyless, false):
			st.Source = KeyKeyless
		case g.APIKey == nil || strings.TrimSpace(*g.APIKey) == "":
			continue // E-CAP-018, reported by validation
		case !ref:
			st.Source = KeyLiteral
			ds = append(ds, c.diagAt(diag.SecKeyFromEnv, field, "artifact '%s' takes its key from a literal in the manifest, read once at launch; store it with mur config set -g and write api_key: ${NAME}", a.Name))
		case supplied[name]:
			st.Name, st.Source = name, KeyFromController
		case look.Config != nil && look.Config(name):
			st.Name, st.Source = name, KeyFromConfig
		case look.Env != nil && look.Env(name):
			st.Name, st.Source = name, KeyFromEnv
			ds = append(ds, c.diagAt(diag.SecKeyFromEnv, field, "artifact '%s' takes %s from the environment, read once at launch and not rotated; set credentials.%s with mur config set -g instead", a.Name, name, name))
		default:
			st.Name, st.Source = name, KeyUnset
			if st.Alternate {
				ds = append(ds, c.diagAt(diag.RunAlternateUnavailable, field, "alternate driver '%s': %s is set in neither credentials.%s in ~/.murmur/config.yaml nor the environment; the choice is staged unavailable", a.Name, name, name))
			} else {
				ds = append(ds, c.diagAt(diag.ManInvalid, field, "%s", UnsetKeyMessage(a.Name, name)))
			}
		}
		out = append(out, st)
	}
	ds.Sort()
	return out, ds
}

// UnsetKeyMessage is the one wording of a ${NAME} gateway key that
// resolves from neither the config file nor the environment: mur doctor
// and a refused mur run print exactly this.
func UnsetKeyMessage(artifact, name string) string {
	return fmt.Sprintf("artifact '%s': %s is set in neither credentials.%s in ~/.murmur/config.yaml nor the environment variable %s; set it with `mur config set -g credentials.%s VALUE` or export %s", artifact, name, name, name, name, name)
}
