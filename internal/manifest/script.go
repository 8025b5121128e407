package manifest

import (
	"fmt"

	"github.com/murmur/mur/internal/diag"
)

// Script returns the index of the capsule's runtime: capsule entry — its
// script, a component exporting murmur:capsule/run@0.1.0 that drives the
// capsule's tools itself — or -1 for an agent capsule.
func (c *Capsule) Script() int {
	for i, a := range c.Artifacts {
		if a.Role() == RoleCapsule {
			return i
		}
	}
	return -1
}

// modelOnly are the fields that say something to or about a model: a
// script capsule has none, so declaring one there is refused rather than
// dropped (docs/script-capsules.md).
var modelOnly = []struct{ path, why string }{
	{"inference", "a script capsule's component drives its tools itself and reaches no model"},
	{"context.max_tokens", "it sizes a model's context window"},
	{"context.seed_budget", "it budgets seed context for a model"},
	{"context.seed_overflow_margin", "it budgets seed context for a model"},
	{"context.images", "it sizes images for a model"},
	{"lifecycle.keep_working", "it prompts a model to go on"},
	{"lifecycle.done_check", "it reopens a model's task"},
	{"lifecycle.max_task_reopens", "it reopens a model's task"},
	{"lifecycle.deadline_notice_secs", "it tells a model the deadline is near"},
}

// script checks a capsule that declares a runtime: capsule entry: one
// entry point, no grant of its own (it imports only
// murmur:tool-registry/invoke, so everything it does is a call to a tool
// under that tool's grants), and nothing declared for a model.
func (v *validator) script() {
	d, c := v.d, v.c
	first := c.Script()
	if first < 0 {
		return
	}
	for i, a := range c.Artifacts {
		if a.Role() != RoleCapsule {
			continue
		}
		p := fmt.Sprintf("artifacts[%d]", i)
		if i != first {
			d.add(diag.ManInvalid, p+".runtime", "a capsule has one script: artifacts[%d] (%s) is already its runtime: capsule entry; make this one a tool, or remove it", first, c.Artifacts[first].Name)
		}
		for _, k := range []string{"capabilities", "gateway", "config"} {
			if d.written(p + "." + k) {
				d.add(diag.ManInvalid, p+"."+k, "is not accepted on runtime: capsule: the script reaches nothing itself, it calls the capsule's tools through murmur:tool-registry/invoke under their grants; grant the tools instead and remove the block")
			}
		}
	}
	for _, f := range modelOnly {
		if d.written(f.path) {
			d.add(diag.ManInvalid, f.path, "is declared in a script capsule (artifacts[%d] %s is runtime: capsule), which runs no model: %s; remove it, or make the capsule an agent capsule", first, c.Artifacts[first].Name, f.why)
		}
	}
}
