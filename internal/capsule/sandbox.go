package capsule

import (
	"errors"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/sandbox"
)

// Containment reports what this host enforces of c's grants: the class
// achieved, the floor declared, each mechanism, the W-SEC-001 warnings for
// what cannot be enforced, and the E-CAP-003 refusal when the floor is
// above what is achieved. mur doctor and mur run --explain-scope print it;
// session_start records it.
func Containment(c *manifest.Capsule) (sandbox.Report, diag.List) {
	_, r, ds := containment(c.Effective())
	return r, ds
}

// containment probes the host for c (defaults applied) and returns the
// sandbox policy, the report and its diagnostics: the report's W-SEC-001
// warnings, and E-CAP-003 at capabilities.containment when the declared
// floor is above what the host achieves, or a refusal of a policy that
// cannot be built.
func containment(c *manifest.Capsule) (sandbox.Policy, sandbox.Report, diag.List) {
	p, err := sandboxPolicy(c)
	if err != nil {
		return p, sandbox.Report{}, diag.List{diag.New(diag.ManInvalid, c.Pos("capabilities"), "capabilities", err.Error())}
	}
	host := sandbox.Probe()
	r := sandbox.Explain(host, p)
	ds := append(diag.List(nil), r.Warnings...)
	if err := sandbox.CheckFloor(host, p); err != nil {
		d := diag.New(diag.CapProviderToolFloor, diag.Pos{}, "capabilities.containment", err.Error())
		errors.As(err, &d)
		d.Pos = c.Pos("capabilities.containment")
		ds = append(ds, d)
	}
	return p, r, ds
}

// sandboxPolicy maps the capsule's capabilities (defaults applied) onto
// the sandbox's portable policy. The session's directories are filled in
// once they exist.
func sandboxPolicy(c *manifest.Capsule) (sandbox.Policy, error) {
	var p sandbox.Policy
	caps := c.Capabilities
	if caps == nil {
		return p, nil
	}
	if caps.Containment != "" {
		cl, err := sandbox.ParseClass(caps.Containment)
		if err != nil {
			return p, err
		}
		p.Floor = cl
	}
	if n := caps.Network; n != nil {
		p.Network.UnixSockets = deref(n.UnixSockets)
		for _, e := range n.Allow {
			ne, err := manifest.ParseNetEntry(e)
			if err != nil {
				return p, err // validation has refused it already (E-CAP-001)
			}
			p.Network.Allow = append(p.Network.Allow, sandbox.AllowHost{Scheme: ne.Scheme, Host: ne.Host, Port: ne.Port})
		}
	}
	if fs := caps.Filesystem; fs != nil {
		p.ReadOnly = fs.ReadOnly
		p.WorkdirExec = deref(fs.WorkdirExec)
	}
	if sh := caps.Shell; sh != nil {
		for _, ir := range sh.InterpreterRuntime {
			for _, d := range ir.Dirs {
				p.InterpreterRuntime = append(p.InterpreterRuntime, sandbox.RuntimeDir{Path: d.Path, ListDir: d.ListDir})
			}
		}
		for _, st := range sh.StagedRuntime {
			p.StagedRuntime = append(p.StagedRuntime, sandbox.StagedTree{Binary: st.Binary, SourcePath: st.SourcePath, Pin: st.Pin})
		}
	}
	if r := caps.Resources; r != nil {
		p.Rlimits = sandbox.Rlimits{MaxProcesses: deref(r.MaxProcesses), MaxOpenFiles: deref(r.MaxOpenFiles),
			MaxFileSizeBytes: deref(r.MaxFileSizeBytes), CPUSeconds: deref(r.CPUSeconds), MemoryBytes: deref(r.MemoryBytes)}
		p.Cgroup = sandbox.Cgroup{MemoryBytes: deref(r.CgroupMemoryBytes), PidsMax: deref(r.CgroupPidsMax),
			CPUPercent: deref(r.CgroupCPUPercent), IOBytesPerSec: deref(r.CgroupIOBytesPerSec)}
		p.WorkdirMaxBytes = deref(r.WorkdirMaxBytes)
	}
	return p, nil
}

// ContainmentRecord is session_start.containment, and the containment of
// mur doctor's and --explain-scope's JSON: the class achieved, the floor
// declared, and each mechanism with whether it is enforced here.
func ContainmentRecord(r sandbox.Report) map[string]any {
	mech := make([]map[string]any, 0, len(r.Mechanisms))
	for _, m := range r.Mechanisms {
		mech = append(mech, map[string]any{"name": m.Name, "enforced": m.Enforced, "detail": m.Detail})
	}
	floor := "none"
	if r.Floor != 0 {
		floor = r.Floor.String()
	}
	return map[string]any{"achieved": r.Achieved.String(), "floor": floor, "mechanisms": mech}
}
