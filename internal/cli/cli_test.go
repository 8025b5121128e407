package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasExamples walks mur's whole command tree: every
// command a person can run shows an Examples section in its --help, each
// example starting with mur.
func TestEveryCommandHasExamples(t *testing.T) {
	root := NewRoot(&Env{Ctx: context.Background(), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			n++
			t.Run(sub.CommandPath(), func(t *testing.T) {
				if strings.TrimSpace(sub.Example) == "" {
					t.Fatalf("%q has no Example: add one (shown under Examples: in --help)", sub.CommandPath())
				}
				for _, l := range strings.Split(sub.Example, "\n") {
					if l = strings.TrimSpace(l); !strings.Contains(l, "mur ") {
						t.Errorf("%q: example line %q does not run mur", sub.CommandPath(), l)
					}
				}
			})
			walk(sub)
		}
	}
	walk(root)
	if n < 10 {
		t.Fatalf("walked %d commands; the tree was not built", n)
	}
}
