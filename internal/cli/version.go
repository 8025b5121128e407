package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/store"
)

func init() { register(newVersionCmd) }

// Version is set at link time (-ldflags "-X .../internal/cli.Version=v1.2.3");
// "dev" otherwise.
var Version = "dev"

// wasmtimeModule is the Go module that links wasmtime's C library; its
// version is the wasmtime release.
const wasmtimeModule = "github.com/bytecodealliance/wasmtime-go/"

// versionInfo is what mur version and mur --version print.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Wasmtime string `json:"wasmtime"`
	// WIT is the served WIT level: each murmur: package at the version
	// this mur serves.
	WIT map[string]string `json:"wit"`
}

func readVersion() versionInfo {
	v := versionInfo{Version: Version, Commit: "unknown", Wasmtime: "unknown", WIT: store.ServedWIT}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		if strings.HasPrefix(d.Path, wasmtimeModule) {
			v.Wasmtime = strings.TrimPrefix(d.Version, "v")
		}
	}
	return v
}

// write prints v for a person, or as one JSON object.
func (v versionInfo) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(v)
	}
	commit := v.Commit
	if v.Modified {
		commit += " (modified)"
	}
	var wit []string
	for pkg, ver := range v.WIT {
		wit = append(wit, pkg+"@"+ver)
	}
	sort.Strings(wit)
	_, err := fmt.Fprintf(w, "mur %s\ncommit:   %s\nwasmtime: %s\nWIT:      %s\n", v.Version, commit, v.Wasmtime, strings.Join(wit, " "))
	return err
}

func newVersionCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print mur's version, commit, wasmtime release and served WIT level",
		Long: `version prints mur's version, the commit it was built from ("(modified)" when
the tree had uncommitted changes), the wasmtime release it links, and its WIT
level: every murmur: package at the version it serves. A component must
export its role's interface at exactly that version (mur build checks it).
mur --version prints the same.`,
		Example: `  mur version
  mur version --json | jq -r .wit'["murmur:tool"]'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return readVersion().write(env.Stdout, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
