package manifest

// Defaults the spec gives, in one place. Effective applies them.
const (
	DefaultMemoryBytes          = 536870912
	DefaultTableElements        = 100000
	DefaultInstances            = 1000
	DefaultDeadlineSeconds      = 600
	DefaultHookDeadlineSeconds  = 30
	DefaultMaxProcesses         = 128
	DefaultMaxOpenFiles         = 1024
	DefaultMaxFileSizeBytes     = 4294967296
	DefaultSubprocessMemory     = 2147483648
	DefaultCgroupMemoryBytes    = 4294967296
	DefaultCgroupPidsMax        = 256
	DefaultCgroupIOBytesPerSec  = 104857600
	DefaultWorkdirMaxBytes      = 10737418240
	DefaultSeedBudget           = 0.10
	DefaultSeedOverflowMargin   = 0.10
	DefaultImagesKeep           = 5
	DefaultImagesMaxBytes       = "5Mi"
	DefaultImagesMaxPerTurn     = 5
	DefaultCompactionThreshold  = 0.98
	DefaultMaxRetries           = 6
	DefaultInitialDelayMS       = 1000
	DefaultMaxDelayMS           = 60000
	DefaultQueueDepth           = 1
	DefaultMaxTaskReopens       = 1
	DefaultDelegationDeadline   = 600
	DefaultDoneCheckTimeoutSecs = 600
	DefaultExportMaxBytes       = "10Mi"
	DefaultPeerTTLOnExit        = "1h"
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func bptr(v bool) *bool      { return &v }
func sptr(v string) *string  { return &v }
func setI(p **int64, v int64) {
	if *p == nil {
		*p = i64(v)
	}
}

// Effective returns a copy of the capsule with every default the spec
// states filled in, so mur doctor --effective can show what a run uses.
// Blocks the spec gives a meaning when omitted (lifecycle, context,
// capability limits) are filled whole; optional features stay absent.
func (c *Capsule) Effective() *Capsule {
	e, _ := ParseCapsule(c.File, c.src)
	if e == nil {
		return c
	}
	for i := range e.Artifacts {
		a := &e.Artifacts[i]
		role := a.Role()
		a.Runtime = role
		if a.LocalSource == nil {
			a.LocalSource = bptr(role == RoleSkill)
		}
		if a.PromptPayload == nil {
			a.PromptPayload = bptr(role == RoleSkill)
		}
		if role == RoleHook && a.OnOverflow == "" {
			a.OnOverflow = "drop"
		}
		if a.Capabilities != nil && a.Capabilities.State != nil && a.Capabilities.State.Store == nil {
			// Omitting store: uses the capsule name, from this manifest.
			a.Capabilities.State.Store = sptr(e.Name)
		}
		if a.Gateway != nil && a.Gateway.Keyless == nil {
			a.Gateway.Keyless = bptr(false)
		}
		if role == RoleHook {
			if a.Capabilities == nil {
				// Hooks are default-deny: no network, no directory.
				a.Capabilities = &Capabilities{Network: &NetworkCap{Allow: []string{}}}
			}
			if a.Capabilities.Limits == nil {
				a.Capabilities.Limits = &Limits{}
			}
			hd := int64(DefaultHookDeadlineSeconds)
			if c.Capabilities != nil && c.Capabilities.Limits != nil && c.Capabilities.Limits.DeadlineSeconds != nil {
				hd = *c.Capabilities.Limits.DeadlineSeconds
			}
			setI(&a.Capabilities.Limits.DeadlineSeconds, hd)
		}
	}
	if e.Capabilities == nil {
		e.Capabilities = &Capabilities{}
	}
	cp := e.Capabilities
	if cp.Network == nil {
		cp.Network = &NetworkCap{}
	}
	if cp.Network.Allow == nil {
		cp.Network.Allow = []string{}
	}
	if cp.Network.UnixSockets == nil {
		cp.Network.UnixSockets = bptr(false)
	}
	if cp.Filesystem == nil {
		cp.Filesystem = &Filesystem{}
	}
	if cp.Filesystem.Scope == nil {
		cp.Filesystem.Scope = sptr(".")
	}
	if cp.Filesystem.WorkdirExec == nil {
		cp.Filesystem.WorkdirExec = bptr(false)
	}
	if cp.Env == nil {
		cp.Env = &EnvCap{Allow: []string{}}
	}
	if cp.Limits == nil {
		cp.Limits = &Limits{}
	}
	setI(&cp.Limits.MemoryBytes, DefaultMemoryBytes)
	setI(&cp.Limits.TableElements, DefaultTableElements)
	setI(&cp.Limits.Instances, DefaultInstances)
	setI(&cp.Limits.DeadlineSeconds, DefaultDeadlineSeconds)
	if cp.Resources == nil {
		cp.Resources = &Resources{}
	}
	r := cp.Resources
	setI(&r.MaxProcesses, DefaultMaxProcesses)
	setI(&r.MaxOpenFiles, DefaultMaxOpenFiles)
	setI(&r.MaxFileSizeBytes, DefaultMaxFileSizeBytes)
	setI(&r.MemoryBytes, DefaultSubprocessMemory)
	setI(&r.CgroupMemoryBytes, DefaultCgroupMemoryBytes)
	setI(&r.CgroupPidsMax, DefaultCgroupPidsMax)
	setI(&r.CgroupIOBytesPerSec, DefaultCgroupIOBytesPerSec)
	setI(&r.WorkdirMaxBytes, DefaultWorkdirMaxBytes)
	if cp.Plan == nil {
		cp.Plan = &Plan{}
	}
	if cp.Plan.Submit == nil {
		cp.Plan.Submit = bptr(false)
	}
	if cp.Install != nil && cp.Install.From == nil {
		cp.Install.From = []string{"stores"}
	}

	if e.Context == nil {
		e.Context = &Context{}
	}
	cx := e.Context
	if cx.Record == "" {
		cx.Record = "on"
	}
	if cx.RecordStore == nil {
		cx.RecordStore = sptr(e.Name)
	}
	// A script capsule runs no model: the model's defaults would be
	// fields it refuses (script.go).
	script := e.Script() >= 0
	if cx.SeedBudget == nil && !script {
		cx.SeedBudget = f64(DefaultSeedBudget)
	}
	if cx.SeedOverflowMargin == nil && !script {
		cx.SeedOverflowMargin = f64(DefaultSeedOverflowMargin)
	}
	if !script {
		if cx.Images == nil {
			cx.Images = &Images{}
		}
		setI(&cx.Images.Keep, DefaultImagesKeep)
		setI(&cx.Images.MaxPerTurn, DefaultImagesMaxPerTurn)
		if cx.Images.MaxBytes == "" {
			cx.Images.MaxBytes = DefaultImagesMaxBytes
		}
	}

	if e.Trace == nil {
		e.Trace = &Trace{}
	}
	if e.Trace.Capture == "" {
		e.Trace.Capture = "meta"
	}
	if ob := e.Observability; ob != nil && ob.Eval != nil {
		for i := range ob.Eval.Scorers {
			s := &ob.Eval.Scorers[i]
			if s.Name == "" {
				s.Name = s.Type
			}
			switch s.Type {
			case "max_turns":
				setI(&s.Max, 10)
			case "max_tokens":
				setI(&s.Max, 100000)
			}
		}
	}

	if in := e.Inference; in != nil {
		if in.Transport == "" {
			in.Transport = "http"
		}
		if !in.IsProcess() {
			if in.ToolRefresh == "" {
				in.ToolRefresh = "compaction"
			}
			if in.Retry == nil {
				in.Retry = &Retry{}
			}
			setI(&in.Retry.MaxRetries, DefaultMaxRetries)
			setI(&in.Retry.InitialDelayMS, DefaultInitialDelayMS)
			setI(&in.Retry.MaxDelayMS, DefaultMaxDelayMS)
			if in.Compaction == nil {
				in.Compaction = &Compaction{}
			}
			cm := in.Compaction
			if cm.Threshold == nil {
				cm.Threshold = f64(DefaultCompactionThreshold)
			}
			if cm.Model == "" {
				cm.Model = in.Model
			}
			if cm.DumpSummaries == nil {
				cm.DumpSummaries = bptr(false)
			}
		}
	}

	if e.Lifecycle == nil {
		e.Lifecycle = &Lifecycle{}
	}
	l := e.Lifecycle
	if l.TaskAcceptance == "" {
		l.TaskAcceptance = "single"
	}
	if l.AfterTask == "" {
		l.AfterTask = "exit"
	}
	setI(&l.QueueDepth, DefaultQueueDepth)
	if l.Conversation == "" {
		l.Conversation = "stateless"
	}
	if !script {
		setI(&l.MaxTaskReopens, DefaultMaxTaskReopens)
	}
	setI(&l.DelegationDeadlineSecs, DefaultDelegationDeadline)
	if l.DoneCheck != nil {
		setI(&l.DoneCheck.TimeoutSecs, DefaultDoneCheckTimeoutSecs)
	}

	if ex := e.Exports; ex != nil {
		if ex.Files != nil && ex.Files.MaxBytes == "" {
			ex.Files.MaxBytes = DefaultExportMaxBytes
		}
		if pf := ex.PeerFiles; pf != nil {
			if pf.MaxBytes == "" {
				pf.MaxBytes = DefaultExportMaxBytes
			}
			if pf.MaxTTL == "" && l.AfterTask == "exit" {
				pf.MaxTTL = DefaultPeerTTLOnExit
			}
		}
	}
	return e
}
