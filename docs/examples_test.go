// Package docs holds mur's documentation pages; its test checks that the
// YAML examples they show are what mur accepts.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// example is one ```yaml block of a page.
type example struct {
	file string
	line int
	text string
	// yields is the code a deliberate counter-example must produce: marked
	// by an HTML comment "<!-- yields E-XXX-NNN -->" on the line before the
	// fence, or, in the generated diagnostics page, the code heading over a
	// block introduced as a manifest "that yields it".
	yields diag.Code
}

var (
	markRE    = regexp.MustCompile(`^<!-- yields ([EW]-[A-Z-]+-[0-9]{3}) -->$`)
	headingRE = regexp.MustCompile(`^### ([EW]-[A-Z-]+-[0-9]{3})$`)
)

// examples reads every ```yaml block of the markdown files in dir.
func examples(t *testing.T, pages []string) []example {
	var out []example
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		heading := diag.Code("")
		for i := 0; i < len(lines); i++ {
			if m := headingRE.FindStringSubmatch(lines[i]); m != nil {
				heading = diag.Code(m[1])
			}
			if strings.TrimSpace(lines[i]) != "```yaml" {
				continue
			}
			ex := example{file: p, line: i + 1}
			for j := i - 1; j >= 0 && j >= i-3; j-- {
				l := strings.TrimSpace(lines[j])
				if m := markRE.FindStringSubmatch(l); m != nil {
					ex.yields = diag.Code(m[1])
					break
				}
				if strings.HasSuffix(l, "that yields it:") && heading != "" {
					ex.yields = heading
					break
				}
			}
			var body []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				body = append(body, lines[i])
			}
			ex.text = strings.Join(body, "\n") + "\n"
			out = append(out, ex)
		}
	}
	return out
}

// TestYAMLExamples parses every YAML example in docs/ and the README with
// the parser mur itself uses for that kind of file (capsule or artifact
// manifest, murmur.lock, config.yaml; a capsule fragment as part of a
// capsule): each must be accepted without an error, or be a marked
// counter-example that yields exactly its code.
func TestYAMLExamples(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	exs := examples(t, pages)
	if len(exs) < 10 {
		t.Fatalf("found %d YAML examples in %v; the reader lost them", len(exs), pages)
	}
	for _, ex := range exs {
		name := ex.file + ":" + strconv.Itoa(ex.line)
		t.Run(name, func(t *testing.T) {
			var top map[string]any
			if err := yaml.Unmarshal([]byte(ex.text), &top); err != nil {
				t.Fatalf("%s: not valid YAML: %v\n%s", name, err, ex.text)
			}
			codes, err := check(name, ex.text, top)
			if ex.yields != "" {
				if !containsCode(codes, ex.yields) {
					t.Fatalf("%s: counter-example should yield %s; got %v (%v)\n%s", name, ex.yields, codes, err, ex.text)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, ex.text)
			}
		})
	}
}

// check parses text as the kind of file its top-level keys say it is and
// returns the codes of its errors, and an error describing them.
func check(name, text string, top map[string]any) ([]diag.Code, error) {
	has := func(k string) bool { _, ok := top[k]; return ok }
	switch {
	case has("lock_version"):
		_, err := artifact.ParseLock([]byte(text))
		return nil, err
	case has("resolution") || has("registries") || has("credentials") || has("spend") || has("publish"):
		_, err := config.Parse(name, []byte(text))
		return nil, err
	case has("runtime"):
		// Every check mur build and mur publish make from the manifest alone.
		a, ds := manifest.ParseArtifact(name, []byte(text))
		if a != nil {
			ds = append(ds, a.CheckPublishable()...)
		}
		return codesOf(ds)
	default:
		// A fragment (a block or two of a capsule, without the identity
		// every manifest carries) is checked as the capsule it would be part
		// of.
		if !has("name") && !has("version") {
			text = "name: fragment\nversion: \"0.1.0\"\n" + text
		}
		_, ds := manifest.ParseCapsule(name, []byte(text))
		return codesOf(ds)
	}
}

func codesOf(ds diag.List) ([]diag.Code, error) {
	var codes []diag.Code
	for _, d := range ds {
		codes = append(codes, d.Code)
	}
	if errs := ds.Errors(); len(errs) > 0 {
		return codes, diag.ListError(errs)
	}
	return codes, nil
}

func containsCode(cs []diag.Code, c diag.Code) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
