package process

import (
	"context"
	"time"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/shell"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// driverCallDeadline bounds each call into the process driver: it only
// translates, so a call that runs this long is a driver stuck in a loop.
const driverCallDeadline = 10 * time.Second

// driverMemory caps the driver's linear memory.
const driverMemory = 256 << 20

// Launch is what a capsule hands the transport at launch.
type Launch struct {
	Runtime *component.Runtime
	// Component is the process driver's compiled component; DriverName
	// its artifacts: name as written.
	Component  *cm.Component
	DriverName string
	// Command is inference.command ("" for describe()'s executable);
	// ManifestDir resolves a relative one; Path is the PATH a bare name is
	// looked up on.
	Command, ManifestDir, Path string
	// EnvAllow is capabilities.env.allow; Getenv reads the host's
	// environment.
	EnvAllow []string
	Getenv   func(string) (string, bool)
	// Ceiling is the field of a spend ceiling in effect
	// (inference.max_session_tokens or spend.machine_tokens_per_day), ""
	// for none.
	Ceiling string
	At      Where
}

// Open runs the launch checks in the spec's order on the process driver,
// resolves the harness binary and checks its version. It returns the
// transport, to be completed with the session's places (Starter,
// Workdir, Logs, Events, Env.Session) once the session exists, and the
// warnings (W-RUN-002); a refusal is a diag.ListError. The caller closes
// the transport.
func Open(ctx context.Context, l Launch) (*Transport, diag.List, error) {
	refuse := func(d diag.Diagnostic) (*Transport, diag.List, error) {
		return nil, nil, diag.ListError(diag.List{d})
	}
	// It instantiates with no grants: no environment, files, network or
	// Murmur host interface.
	inst, err := l.Runtime.Instantiate(ctx, l.Component, component.Options{
		Name: l.DriverName, Policy: wasi.Policy{},
		Limits: cm.Limits{MemoryBytes: driverMemory, Deadline: driverCallDeadline},
	})
	if err != nil {
		if !component.ExportsProcess(l.Component) {
			return refuse(InterfaceRefusal(component.ErrNoProcess, l.DriverName, l.At))
		}
		return refuse(InterfaceRefusal(err, l.DriverName, l.At))
	}
	drv, err := inst.ProcessDriver()
	if err != nil {
		inst.Close()
		return refuse(InterfaceRefusal(err, l.DriverName, l.At))
	}
	desc, err := drv.Describe(ctx)
	if err != nil {
		inst.Close()
		return refuse(InterfaceRefusal(err, l.DriverName, l.At))
	}
	if d := CheckDescription(desc, l.DriverName, l.EnvAllow, l.Ceiling, l.At); d != nil {
		inst.Close()
		return refuse(*d)
	}
	bin, d := Resolve(l.Command, desc.Executable, l.Path, l.ManifestDir, l.At)
	if d != nil {
		inst.Close()
		return refuse(*d)
	}
	env := HostEnv(l.EnvAllow, l.Getenv, shell.IsCredentialName)
	var warn diag.List
	version, w := VersionCheck(ctx, drv, desc, bin, l.ManifestDir, env.Version(), l.At)
	if w != nil {
		warn = append(warn, *w)
	}
	return &Transport{Driver: drv, DriverName: l.DriverName, Desc: desc, Binary: bin, Version: version, Env: env, closer: inst}, warn, nil
}

// Close releases the driver's instance.
func (t *Transport) Close() error {
	if t.closer == nil {
		return nil
	}
	return t.closer.Close()
}

// Describe is the transport's part of session_start.
func (t *Transport) Describe() map[string]any {
	f := map[string]any{"transport": "process", "driver": t.DriverName, "harness": map[string]any{
		"binary": t.Binary, "version": t.Version, "interrupt": string(t.Desc.Interrupt), "reports_usage": t.Desc.ReportsUsage,
	}}
	if t.Model != nil {
		f["model"] = *t.Model
	}
	return f
}
