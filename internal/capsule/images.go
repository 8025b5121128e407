package capsule

import "github.com/murmur/mur/internal/images"

// ImageLimits are the session's context.images as its plan resolved
// them: the door refuses an A2A message's images past them.
func (s *Session) ImageLimits() images.Limits { return s.plan.Images }

// TextOnly says why this session's model is handed a task's text only, or
// "" when a message's images reach it: a harness under transport: process
// is launched with the prompt alone (the process driver's launch request
// has no images), so the door refuses an image instead of dropping it.
func (s *Session) TextOnly() string {
	if s.plan.Inference.IsProcess() {
		return "this capsule runs on a harness (transport: process), which is handed the task's text only"
	}
	return ""
}
