package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/store"
)

func init() { register(newListCmd) }

func newListCmd(env *Env) *cobra.Command {
	var (
		path   string
		global bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show installed artifacts and whether their bytes match murmur.lock",
		Long: `list shows each artifact murmur.lock pins for the capsule, re-hashing the
stored package: ok, missing (run mur install) or tampered (bytes differ from
the pin). --global lists the global store under ~/.murmur instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			defer tw.Flush()
			if global {
				open, err := store.OpenFromConfig("")
				if err != nil {
					return reportErr(env, err)
				}
				ms, err := store.GlobalStore(open.MurmurDir).List(env.Ctx)
				if err != nil {
					return reportErr(env, err)
				}
				fmt.Fprintln(tw, "NAME\tVERSION\tRUNTIME\tEXECUTION")
				for _, m := range ms {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Version, m.Runtime, m.Execution)
				}
				return nil
			}
			p := store.ProjectAt(projectDirOf(path))
			lock, err := artifact.LoadLock(p.LockPath())
			if err != nil {
				return reportErr(env, err)
			}
			fmt.Fprintln(tw, "NAME\tVERSION\tDIGEST\tORIGIN\tSTATUS")
			bad := 0
			for _, pin := range lock.Artifacts {
				r, _ := artifact.ParseFullName(pin.Name)
				r.Version = pin.Version
				status := "ok"
				f, err := p.Store.Fetch(env.Ctx, r)
				switch {
				case errors.Is(err, store.ErrNotFound):
					status = "missing"
				case err != nil, f.Digest != pin.Digest:
					status = "tampered"
				}
				if status != "ok" {
					bad++
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", pin.Name, pin.Version, short(pin.Digest), pin.Origin, status)
			}
			if bad > 0 {
				tw.Flush()
				fmt.Fprintf(env.Stderr, "%d artifact(s) not as pinned: run mur install\n", bad)
				return &ExitError{Code: 1, Silent: true}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest")
	cmd.Flags().BoolVarP(&global, "global", "g", false, "list the global store")
	return cmd
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
