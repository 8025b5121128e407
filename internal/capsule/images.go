package capsule

import "github.com/murmur/mur/internal/images"

// ImageLimits are the session's context.images as its plan resolved
// them: the door refuses an A2A message's images past them.
func (s *Session) ImageLimits() images.Limits { return s.plan.Images }
