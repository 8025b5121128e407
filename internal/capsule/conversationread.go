package capsule

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/conversation"
	"github.com/murmur/mur/internal/infer"
)

// MaxConversationPage is the most entries one murmur:conversation/read
// call returns, whatever limit the hook asks: the page is copied into the
// hook's memory, which the runtime caps (hooks.Memory). A hook pages on
// with next.
const MaxConversationPage = 1000

// hookConversation serves murmur:conversation/read to a hook granted
// capabilities.conversation.read: the capsule's durable record, read from
// the store the session appends to (spec 004: no artifact gets a path
// into ~/.murmur/conversations/; the host reads it for the hook).
type hookConversation struct {
	h   *sessionHooks
	pol conversation.Policy
	// empty: context.record is off, or the capsule runs transport:
	// process, where no record is written; every read is an empty page.
	empty bool
}

func newHookConversation(h *sessionHooks) (*hookConversation, error) {
	home, err := config.MurmurDir()
	if err != nil {
		return nil, err
	}
	pol, err := conversation.PolicyFor(h.c, home)
	if err != nil {
		return nil, err
	}
	process := h.c.Inference != nil && h.c.Inference.IsProcess()
	return &hookConversation{h: h, pol: pol, empty: !pol.Record || process}, nil
}

// ReadPage implements component.ConversationReader. contextID nil reads
// the context of the task in progress. index is the record's message id
// less one, so it stays put when context.retain drops older messages and
// across sessions.
func (r *hookConversation) ReadPage(_ context.Context, contextID *string, start uint64, limit uint32) (component.ConversationPage, error) {
	page := component.ConversationPage{Entries: []component.ConversationEntry{}}
	id := ""
	if contextID != nil {
		id = *contextID
	} else {
		r.h.mu.Lock()
		if r.h.task != nil {
			id = r.h.task.ContextID
		}
		r.h.mu.Unlock()
		if id == "" {
			return page, &component.ReadError{Case: "no-context", Msg: "no task is in progress at this event; name the context-id to read"}
		}
	}
	if r.empty || id == "" {
		return page, nil
	}
	rec, err := conversation.ReadFile(r.pol.Store.Path(id))
	if err != nil {
		// read-error has no case for a damaged record; no-context says
		// there is no context to read, with the reason.
		return page, &component.ReadError{Case: "no-context", Msg: fmt.Sprintf("the record of context %q cannot be read: %v", id, err)}
	}
	n := min(limit, MaxConversationPage)
	for _, e := range rec.Entries {
		idx := uint64(e.ID - 1)
		if idx < start {
			continue
		}
		if uint32(len(page.Entries)) == n {
			page.Next = &idx
			break
		}
		ent := component.ConversationEntry{Index: idx, Role: e.Message.Role, Content: content(e.Message)}
		if e.TaskID != "" {
			t := e.TaskID
			ent.TaskID = &t
		}
		page.Entries = append(page.Entries, ent)
	}
	return page, nil
}

// content is an entry's content as one string: the text of a message of
// text blocks only, else its blocks as the record's JSON (a tool call or
// a tool result keeps its id, name and input).
func content(m infer.Message) string {
	var texts []string
	for _, b := range m.Content {
		if b.Type != infer.BlockText {
			j, _ := json.Marshal(m.Content)
			return string(j)
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n")
}
