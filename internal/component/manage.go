package component

import (
	"context"

	"github.com/murmur/mur/internal/wasm/cm"
)

// IfaceManage is murmur:artifact-manager/manage, which the host serves to
// script capsules under their capabilities.install.
const IfaceManage = "murmur:artifact-manager/manage@0.1.0"

// RuntimeType is manage's enum runtime-type.
type RuntimeType string

func (RuntimeType) witEnum() {}

// The runtime-type cases.
const (
	RuntimeWasm   RuntimeType = "wasm"
	RuntimeNative RuntimeType = "native"
)

// ArtifactSummary is record artifact-summary.
type ArtifactSummary struct {
	Name    string      `wit:"name"`
	Version string      `wit:"version"`
	Runtime RuntimeType `wit:"runtime"`
}

// ArtifactInfo is record artifact-info.
type ArtifactInfo struct {
	Name         string      `wit:"name"`
	Version      string      `wit:"version"`
	Description  string      `wit:"description"`
	Tags         []string    `wit:"tags"`
	Runtime      RuntimeType `wit:"runtime"`
	InputSchema  *string     `wit:"input-schema"`
	OutputSchema *string     `wit:"output-schema"`
}

// RuntimeState is record runtime-state.
type RuntimeState struct {
	CapsuleID    string            `wit:"capsule-id"`
	Installed    []ArtifactSummary `wit:"installed"`
	Capabilities string            `wit:"capabilities"`
}

// ArtifactManager serves murmur:artifact-manager/manage@0.1.0: the
// session's installed artifacts, and pulls and removals under the
// capsule's capabilities.install.
type ArtifactManager interface {
	List(ctx context.Context) []ArtifactSummary
	Describe(ctx context.Context, name string) (ArtifactInfo, error)
	Search(ctx context.Context, query string) ([]ArtifactSummary, error)
	Pull(ctx context.Context, name, version string) (ArtifactSummary, error)
	Remove(ctx context.Context, name string) (bool, error)
	Diagnostics(ctx context.Context) (RuntimeState, error)
}

// manageNotGranted answers a call from a component whose capsule grants
// no install.
const manageNotGranted = "artifact-manager/manage: not granted: the capsule declares no capabilities.install"

// defineManage links murmur:artifact-manager/manage@0.1.0 on l.
func defineManage(l *cm.Linker) {
	at := []string{IfaceManage}
	mgr := func(c *cm.Caller) ArtifactManager { return hostOf(c).Artifacts }
	l.Func(at, "list", func(c *cm.Caller, _ []cm.Val) (cm.Val, error) {
		m := mgr(c)
		if m == nil {
			return lower([]ArtifactSummary{}), nil
		}
		out := m.List(c.Context())
		if out == nil {
			out = []ArtifactSummary{}
		}
		return lower(out), nil
	})
	l.Func(at, "describe", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		m := mgr(c)
		if m == nil {
			return cm.Err(cm.String(manageNotGranted)), nil
		}
		r, err := m.Describe(c.Context(), a[0].Str())
		return okOrErr(r, err), nil
	})
	l.Func(at, "search", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		m := mgr(c)
		if m == nil {
			return cm.Err(cm.String(manageNotGranted)), nil
		}
		r, err := m.Search(c.Context(), a[0].Str())
		if r == nil {
			r = []ArtifactSummary{}
		}
		return okOrErr(r, err), nil
	})
	l.Func(at, "pull", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		m := mgr(c)
		if m == nil {
			return cm.Err(cm.String(manageNotGranted)), nil
		}
		r, err := m.Pull(c.Context(), a[0].Str(), a[1].Str())
		return okOrErr(r, err), nil
	})
	l.Func(at, "remove", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		m := mgr(c)
		if m == nil {
			return cm.Err(cm.String(manageNotGranted)), nil
		}
		ok, err := m.Remove(c.Context(), a[0].Str())
		if err != nil {
			return cm.Err(cm.String(err.Error())), nil
		}
		return cm.OK(cm.Bool(ok)), nil
	})
	l.Func(at, "diagnostics", func(c *cm.Caller, _ []cm.Val) (cm.Val, error) {
		m := mgr(c)
		if m == nil {
			return cm.Err(cm.String(manageNotGranted)), nil
		}
		r, err := m.Diagnostics(c.Context())
		return okOrErr(r, err), nil
	})
}
