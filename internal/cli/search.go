package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/store"
)

func init() { register(newSearchCmd) }

func newSearchCmd(env *Env) *cobra.Command {
	var (
		path   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search the artifact index by name and description",
		Long: `search prints the artifact index entries whose name, role or description
contains every word of QUERY, ignoring case. Exit status 1 when none does.`,
		Example: `  mur search echo
  mur search web search --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			idx, err := loadIndex(env, path)
			if err != nil {
				return err
			}
			q := strings.Join(args, " ")
			hits := store.Search(idx, q)
			if len(hits) == 0 && !asJSON {
				fmt.Fprintf(env.Stderr, "no artifact matches %q\n", q)
				return &ExitError{Code: 1, Silent: true}
			}
			return printIndex(env, hits, asJSON)
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest whose project store and config apply")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
