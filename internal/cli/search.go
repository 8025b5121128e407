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
		path, registry string
		limit          int
		asJSON         bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search the artifact index by name and description",
		Long: `search prints the artifact index entries whose name, role or description
contains every word of QUERY, ignoring case. Exit status 1 when none does.
--registry NAME searches that registry of config.yaml alone (E-REG-012 for a
name it does not define; E-REG-002/E-REG-003 when it cannot be listed).
--limit N prints at most the first N matches, by name.`,
		Example: `  mur search echo
  mur search web search --json
  mur search review --registry hub --limit 5`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usageError(fmt.Errorf("--limit %d: give a positive number of matches, or 0 for all", limit))
			}
			var idx []store.IndexEntry
			var err error
			if registry != "" {
				idx, err = registryIndex(env, path, registry)
			} else {
				idx, err = loadIndex(env, path)
			}
			if err != nil {
				return err
			}
			q := strings.Join(args, " ")
			hits := store.Search(idx, q)
			if limit > 0 && len(hits) > limit {
				hits = hits[:limit]
			}
			if len(hits) == 0 && !asJSON {
				fmt.Fprintf(env.Stderr, "no artifact matches %q\n", q)
				return &ExitError{Code: 1, Silent: true}
			}
			return printIndex(env, hits, asJSON)
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest whose project store and config apply")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&registry, "registry", "", "search this registry of config.yaml only")
	cmd.Flags().IntVar(&limit, "limit", 0, "print at most this many matches (0: all)")
	return cmd
}

// registryIndex is the index of the one registry called name; a registry
// that cannot be listed is a failure here, not a warning, since nothing
// else is searched.
func registryIndex(env *Env, path, name string) ([]store.IndexEntry, error) {
	open, err := store.OpenFromConfig(projectIfAny(path))
	if err != nil {
		return nil, reportErr(env, err)
	}
	src, err := registrySource(open, name)
	if err != nil {
		return nil, reportErr(env, err)
	}
	idx, errs := store.Index(env.Ctx, []store.Source{src})
	if len(errs) > 0 {
		return nil, reportErr(env, errs[0])
	}
	return idx, nil
}
