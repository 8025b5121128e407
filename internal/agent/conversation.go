package agent

import (
	"encoding/json"

	"github.com/murmur/mur/internal/tokens"
	"github.com/murmur/mur/internal/trace"
)

// perMessageTokens approximates the framing a provider adds around each
// message (role markers, separators); BPE counts of the text alone miss it.
const perMessageTokens = 4

// conversation is the logical message list of a task. Messages are never
// edited once appended, so each one's token count and hash are computed
// once: a turn's overhead does not grow with the conversation's length.
// A count may run on another goroutine while the provider answers; the
// conversation is not appended to until that count is joined.
type conversation struct {
	// log receives every message added after the task's history: the
	// session's durable record of the context; nil keeps none.
	log    MessageLog
	msgs   []Message
	tokens []int64
	shas   []string
	// anchor is the provider's own count of msgs[:anchorLen] plus the
	// system prompt and tools, from the last call that reported one.
	anchor    int64
	anchorLen int
}

// add appends m, hashing it once; its token count is taken lazily (see
// count), so appending never waits for the tokenizer.
func (c *conversation) add(m Message, rec trace.Recorder) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	sha, err := rec.Hash(b)
	c.msgs = append(c.msgs, m)
	c.shas = append(c.shas, sha)
	if c.log != nil {
		c.log.Append(m)
	}
	return err
}

// MessageLog receives each message of a task's conversation as it is
// made (the capsule session's conversation record).
type MessageLog interface {
	Append(Message)
}

// seed starts the conversation from history, which its log already holds.
func (c *conversation) seed(history []Message, rec trace.Recorder) error {
	log := c.log
	c.log = nil
	defer func() { c.log = log }()
	for _, m := range history {
		if err := c.add(m, rec); err != nil {
			return err
		}
	}
	return nil
}

// count fills in the token count of every message not yet counted. Each
// message is counted once: messages are never edited after append.
func (c *conversation) count() {
	for i := len(c.tokens); i < len(c.msgs); i++ {
		c.tokens = append(c.tokens, MessageTokens(c.msgs[i]))
	}
}

// MessageTokens is the runtime's count of one message as a request
// carries it: what the loop measures the conversation with, and what a
// seed is measured against its budget with.
func MessageTokens(m Message) int64 {
	n := int64(perMessageTokens)
	for _, bl := range m.Content {
		n += int64(tokens.Count(bl.Text))
		if len(bl.Input) > 0 {
			n += int64(tokens.CountBytes(bl.Input)) + int64(tokens.Count(bl.Name))
		}
	}
	return n
}

// estimate is the input_tokens of a request carrying the whole
// conversation: the runtime's count, anchored on the provider's last count
// of the conversation when there is one.
func (c *conversation) estimate(fixed int64) int64 {
	c.count()
	base, from := fixed, 0
	if c.anchorLen > 0 {
		base, from = c.anchor, c.anchorLen
	}
	for _, n := range c.tokens[from:] {
		base += n
	}
	return base
}
