package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/store"
)

func init() { register(newListCmd) }

// listedPin is one row of mur list: a pin and what the project store holds.
type listedPin struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
	Origin  string `json:"origin"`
	// Status is ok, missing (run mur install) or tampered.
	Status string `json:"status"`
}

// listedStored is one row of mur list -g.
type listedStored struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Runtime   string `json:"runtime"`
	Execution string `json:"execution"`
}

func newListCmd(env *Env) *cobra.Command {
	var (
		path        string
		global, all bool
		asJSON      bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show installed artifacts and whether their bytes match murmur.lock",
		Long: `list shows each artifact murmur.lock pins for the capsule, re-hashing the
stored package: ok, missing (run mur install) or tampered (bytes differ from
the pin); it exits 1 unless all are ok. It needs a capsule: run it beside
murmur.yaml or pass --manifest. --global (-g) lists the global store under
~/.murmur instead, from anywhere. --all lists every version of every artifact
each source of the resolution order holds (the project store beside a
murmur.yaml, the global store, each registry), with the source it is in; a
source that cannot be listed is named on stderr and the exit status is 1.`,
		Example: `  cd capsules/hello && mur list
  mur list --manifest capsules/hello/murmur.yaml --json
  mur list -g
  mur list --all --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if global && all {
				return usageError(fmt.Errorf("--all already lists the global store: give one of --all and -g"))
			}
			if all {
				return listAll(env, path, asJSON)
			}
			if global {
				return listGlobal(env, asJSON)
			}
			if err := needProject(cmd, path); err != nil {
				return err
			}
			p := store.ProjectAt(projectDirOf(path))
			lock, err := artifact.LoadLock(p.LockPath())
			if err != nil {
				return reportErr(env, err)
			}
			rows := []listedPin{}
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
				rows = append(rows, listedPin{pin.Name, pin.Version, pin.Digest, pin.Origin, status})
			}
			if asJSON {
				if err := json.NewEncoder(env.Stdout).Encode(rows); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tVERSION\tDIGEST\tORIGIN\tSTATUS")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Version, short(r.Digest), r.Origin, r.Status)
				}
				tw.Flush()
			}
			if bad > 0 {
				fmt.Fprintf(env.Stderr, "%d artifact(s) not as pinned: run mur install\n", bad)
				return &ExitError{Code: ExitFailed, Silent: true}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest")
	cmd.Flags().BoolVarP(&global, "global", "g", false, "list the global store")
	cmd.Flags().BoolVar(&all, "all", false, "list every version in every source of the resolution order")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

// listGlobal lists every artifact of the global store.
func listGlobal(env *Env, asJSON bool) error {
	open, err := store.OpenFromConfig("")
	if err != nil {
		return reportErr(env, err)
	}
	ms, err := store.GlobalStore(open.MurmurDir).List(env.Ctx)
	if err != nil {
		return reportErr(env, err)
	}
	rows := []listedStored{}
	for _, m := range ms {
		rows = append(rows, listedStored{m.Name, m.Version, m.Runtime, m.Execution})
	}
	if asJSON {
		return json.NewEncoder(env.Stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintln(tw, "NAME\tVERSION\tRUNTIME\tEXECUTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Version, r.Runtime, r.Execution)
	}
	return nil
}

// listedAll is one row of mur list --all.
type listedAll struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Runtime   string `json:"runtime"`
	Execution string `json:"execution"`
	Platform  string `json:"platform"`
	Source    string `json:"source"`
}

// listAll lists every artifact version of every source in the resolution
// order, in that order; a source that fails is reported and the rest are
// still listed.
func listAll(env *Env, path string, asJSON bool) error {
	open, err := store.OpenFromConfig(projectIfAny(path))
	if err != nil {
		return reportErr(env, err)
	}
	srcs, err := open.Sources()
	if err != nil {
		return reportErr(env, err)
	}
	rows := []listedAll{}
	failed := 0
	for _, s := range srcs {
		ms, err := s.List(env.Ctx)
		if err != nil {
			failed++
			code, _ := store.CodeOf(err)
			fmt.Fprintf(env.Stderr, "%s %s not listed: %v\n", code, s.Name(), err)
			continue
		}
		for _, m := range ms {
			rows = append(rows, listedAll{m.Name, m.Version, m.Runtime, m.Execution, m.Platform, s.Name()})
		}
	}
	if asJSON {
		if err := json.NewEncoder(env.Stdout).Encode(rows); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tVERSION\tRUNTIME\tEXECUTION\tPLATFORM\tSOURCE")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Version, r.Runtime, r.Execution, r.Platform, r.Source)
		}
		tw.Flush()
	}
	if failed > 0 {
		return &ExitError{Code: ExitFailed, Silent: true}
	}
	return nil
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
