package hooks

// Bound reports whether any hook is dispatched for handler: bound to it
// (or to every event), exporting it, and not a policy hook. The session
// checks it before doing the work an event needs (compaction builds the
// whole conversation as text).
func (s *Set) Bound(handler string) bool {
	if s == nil {
		return false
	}
	for _, h := range s.hooks {
		if h.bound(handler) && h.Policy != PolicyDeny && h.c.Has(handler) {
			return true
		}
	}
	return false
}
