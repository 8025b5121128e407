package capsule

import (
	"fmt"

	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
)

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// retention is trace.retain, which the session applies to the capsule's
// older sessions at launch; nil deletes nothing, ever.
func retention(c *manifest.Capsule) (*session.Retain, error) {
	if c.Trace == nil || c.Trace.Retain == nil {
		return nil, nil
	}
	r := c.Trace.Retain
	ret := &session.Retain{MaxSessions: int(deref(r.MaxSessions))}
	if r.MaxAge != "" {
		d, err := manifest.ParseDuration(r.MaxAge, "smhd")
		if err != nil {
			return nil, fmt.Errorf("trace.retain.max_age: %w", err)
		}
		ret.MaxAge = d
	}
	return ret, nil
}
