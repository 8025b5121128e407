package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/manifest"
)

// explainScope prints the effective grants of the manifest at path, or
// refuses an invalid manifest with its diagnostics (exit 1). It needs no
// installed artifact.
func explainScope(env *Env, path string, asJSON bool) error {
	c, ds := manifest.LoadCapsule(path)
	if c == nil || ds.HasErrors() {
		writeDiagnostics(env.Stderr, ds, true)
		return &ExitError{Code: 1, Silent: true}
	}
	r, cds := capsule.Containment(c)
	writeDiagnostics(env.Stderr, append(ds.Warnings(), cds.Warnings()...), true)
	s := manifest.ExplainScope(c)
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			manifest.Scope
			Enforcement map[string]any `json:"enforcement"`
		}{s, capsule.ContainmentRecord(r)})
	}
	renderScope(env.Stdout, s)
	fmt.Fprintln(env.Stdout, "enforcement on this host:")
	for _, l := range r.Lines() {
		fmt.Fprintf(env.Stdout, "  %s\n", l)
	}
	if cds.HasErrors() {
		// A launch would be refused; say so with the same code.
		writeDiagnostics(env.Stderr, cds.Errors(), true)
		return &ExitError{Code: 1, Silent: true}
	}
	return nil
}

func renderScope(w io.Writer, s manifest.Scope) {
	fmt.Fprintf(w, "effective scope of %s@%s:\n", s.Capsule, s.Version)
	line := func(k, v string) { fmt.Fprintf(w, "  %s: %s\n", k, v) }
	list := func(k string, xs []string) {
		if len(xs) == 0 {
			line(k, "<none>")
			return
		}
		fmt.Fprintf(w, "  %s:\n", k)
		for _, x := range xs {
			fmt.Fprintf(w, "    - %s\n", x)
		}
	}
	line("containment", s.Containment)
	list("network allow", s.NetworkAllow)
	line("unix sockets", fmt.Sprint(s.UnixSockets))
	list("peer fetch allow", s.PeerFetchAllow)
	line("filesystem scope", s.FilesystemScope)
	if len(s.ReadOnly) == 0 {
		line("read-only", "<none>")
	} else {
		enf := s.ReadOnlyEnforcement
		if len(s.ReadOnlyAdvisoryFor) > 0 {
			enf += " against " + strings.Join(s.ReadOnlyAdvisoryFor, ", ") + "; enforced for every call the runtime can read as a write"
		}
		fmt.Fprintf(w, "  read-only (%s):\n", enf)
		for _, x := range s.ReadOnly {
			fmt.Fprintf(w, "    - %s\n", x)
		}
	}
	line("workdir exec", fmt.Sprint(s.WorkdirExec))
	list("shell allow", s.ShellAllow)
	list("env allow", s.EnvAllow)
	line("plan submit", fmt.Sprint(s.PlanSubmit))
	list("install skill", s.InstallSkill)
	list("install tool", s.InstallTool)
	list("install from", s.InstallFrom)
	list("spawn allow", s.SpawnAllow)
	list("spawn workdir snapshot", s.SpawnWorkdirSnapshot)
	list("artifact config", s.ConfiguredArtifacts)
	var arts []string
	for _, a := range s.Artifacts {
		desc := fmt.Sprintf("%s (%s", a.Name, a.Runtime)
		if !a.ModelVisible {
			desc += ", hidden from the model"
		}
		switch {
		case a.Runtime == manifest.RoleSkill:
		case a.Inherits:
			desc += ", network: capsule ceiling"
		default:
			desc += ", network: " + orNone(a.Network)
		}
		if a.Scope != "" {
			desc += ", scope: " + a.Scope
		}
		if a.Records {
			desc += ", records"
		}
		if a.StateStore != "" {
			desc += ", state: " + a.StateStore
		}
		if a.TaskIORead {
			desc += ", task_io read"
		}
		if a.ConvRead {
			desc += ", conversation read"
		}
		arts = append(arts, desc+")")
	}
	list("artifacts", arts)
	var gws []string
	for _, g := range s.Gateways {
		m := "unmetered"
		if g.Metered {
			m = "metered"
		}
		gws = append(gws, fmt.Sprintf("%s -> %s (key: %s, %s)", g.Artifact, g.Endpoint, g.Credential, m))
	}
	list("gateways", gws)
	if s.DoorAuthentication {
		line("door authentication", "bearer, credentials: "+orNone(s.DoorCredentials))
	} else {
		line("door authentication", "<none>: the door answers every caller")
	}
	line("peer tasks accept", fmt.Sprint(s.PeerTasksAccept))
	if s.ExportFilesRoot != "" {
		line("export files", s.ExportFilesRoot)
	}
	if s.ExportPeerFilesRoot != "" {
		line("export peer files", s.ExportPeerFilesRoot)
	}
	list("control settings", s.ControlSettings)
	list("control secrets", s.ControlSecrets)
	list("control agent settings", s.ControlAgentSettings)
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "<none>"
	}
	return strings.Join(xs, ", ")
}
