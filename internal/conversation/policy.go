package conversation

import (
	"fmt"

	"github.com/murmur/mur/internal/manifest"
)

// PolicyFor resolves a capsule's conversation policy from its manifest
// (defaults applied, Effective): context.record, the store under
// murmurHome, context.retain and lifecycle.conversation. The launch's
// context is the caller's to set.
func PolicyFor(c *manifest.Capsule, murmurHome string) (Policy, error) {
	p := Policy{Record: true, Store: Store{Capsule: c.Name}}
	name := c.Name
	if cx := c.Context; cx != nil {
		p.Record = cx.Record != "off"
		if cx.RecordStore != nil && *cx.RecordStore != "" {
			name = *cx.RecordStore
		}
		if r := cx.Retain; r != nil {
			p.Store.Owns = true
			if r.MaxMessages != nil {
				p.MaxMessages = int(*r.MaxMessages)
			}
			if r.MaxAge != "" {
				d, err := manifest.ParseDuration(r.MaxAge, "smhd")
				if err != nil {
					return p, fmt.Errorf("context.retain.max_age: %w", err)
				}
				p.MaxAge = d
			}
		}
	}
	p.Store.Dir = StoreDir(murmurHome, name)
	p.Threaded = c.Lifecycle != nil && c.Lifecycle.Conversation == "threaded"
	p.Load = p.Threaded
	return p, nil
}
