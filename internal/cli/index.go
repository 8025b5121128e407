package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/store"
)

func init() { register(newIndexCmd) }

func newIndexCmd(env *Env) *cobra.Command {
	var (
		path   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Show the artifact index: every artifact with its description's first sentence",
		Long: `index lists every artifact the sources in the resolution order hold (the
project store when run beside a murmur.yaml, the global store, and each
registry), once per name at its newest version that fits this mur, with the
first sentence of its description, and records it in ~/.murmur/index.json,
where a running session's search reads it without reaching a registry.`,
		Example: `  mur index
  mur index --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			idx, err := loadIndex(env, path)
			if err != nil {
				return err
			}
			md, err := config.MurmurDir()
			if err == nil {
				err = store.RecordIndex(md, idx)
			}
			if err != nil {
				return reportErr(env, err)
			}
			return printIndex(env, idx, asJSON)
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest whose project store and config apply")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func loadIndex(env *Env, path string) ([]store.IndexEntry, error) {
	open, err := store.OpenFromConfig(projectIfAny(path))
	if err != nil {
		return nil, reportErr(env, err)
	}
	srcs, err := open.Sources()
	if err != nil {
		return nil, reportErr(env, err)
	}
	idx, errs := store.Index(env.Ctx, srcs)
	for _, e := range errs {
		code, _ := store.CodeOf(e)
		fmt.Fprintf(env.Stderr, "warning: %s %v (index is missing that source)\n", code, e)
	}
	return idx, nil
}

func printIndex(env *Env, idx []store.IndexEntry, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if idx == nil {
			idx = []store.IndexEntry{}
		}
		return enc.Encode(idx)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tRUNTIME\tDESCRIPTION")
	for _, e := range idx {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.Version, e.Runtime, e.Description)
	}
	return tw.Flush()
}
