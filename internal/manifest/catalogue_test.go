package manifest

import (
	"testing"

	"github.com/murmur/mur/internal/diag"
)

// TestCatalogueExamples runs every catalogue example through the validator
// and requires that exact code to appear.
func TestCatalogueExamples(t *testing.T) {
	for _, e := range diag.Catalogue {
		if e.Example == "" {
			continue
		}
		t.Run(string(e.Code), func(t *testing.T) {
			var ds diag.List
			switch e.Kind {
			case diag.Capsule:
				_, ds = ParseCapsule("murmur.yaml", []byte(e.Example))
			case diag.Artifact:
				// Artifact examples go through every check mur build and
				// mur publish make from the manifest alone.
				var a *Artifact
				a, ds = ParseArtifact("murmur.yaml", []byte(e.Example))
				if a != nil {
					ds = append(ds, a.CheckPublishable()...)
				}
			default:
				t.Fatalf("unknown kind %q", e.Kind)
			}
			if !ds.Has(e.Code) {
				t.Errorf("example does not yield %s; got:\n%v", e.Code, ds)
			}
		})
	}
}
