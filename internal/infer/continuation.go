package infer

import (
	"strconv"
	"sync"
)

// maxHeld bounds the conversations one driver instance keeps: the runtime
// holds one id per context at a time, so older ids of a context are dead
// once a newer one was handed out and are dropped.
const maxHeld = 64

// Conversations is the state behind continuation: the full message
// history each handed-out continuation id stands for. It lives as long as
// the driver's component instance, which is what "holds conversation
// state" means for a provider API (Messages, Chat Completions) that keeps
// none itself: the host sends only what was appended, and the driver
// resends the whole conversation to the provider.
type Conversations struct {
	mu    sync.Mutex
	next  int
	held  map[string]held
	order []string
}

type held struct {
	contextID string
	messages  []Message
}

// Put records messages under a new id for contextID and returns the id.
// The context's older ids are dropped: the runtime only ever continues
// from the latest one.
func (c *Conversations) Put(contextID string, messages []Message) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held == nil {
		c.held = map[string]held{}
	}
	for id, h := range c.held {
		if h.contextID == contextID {
			c.drop(id)
		}
	}
	c.next++
	id := "mcont_" + strconv.Itoa(c.next)
	c.held[id] = held{contextID: contextID, messages: messages}
	c.order = append(c.order, id)
	for len(c.order) > maxHeld {
		c.drop(c.order[0])
	}
	return id
}

// Get returns the history behind id, which must have been handed out in
// the same context: a continuation never crosses contexts.
func (c *Conversations) Get(id, contextID string) ([]Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.held[id]
	if !ok || h.contextID != contextID {
		return nil, false
	}
	return h.messages, true
}

func (c *Conversations) drop(id string) {
	delete(c.held, id)
	for i, o := range c.order {
		if o == id {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}
