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
type conversation struct {
	msgs   []Message
	tokens []int64
	shas   []string
	// anchor is the provider's own count of msgs[:anchorLen] plus the
	// system prompt and tools, from the last call that reported one.
	anchor    int64
	anchorLen int
}

// add appends m, counting and hashing it once.
func (c *conversation) add(m Message, rec trace.Recorder) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	n := int64(perMessageTokens)
	for _, bl := range m.Content {
		n += int64(tokens.Count(bl.Text))
		if len(bl.Input) > 0 {
			n += int64(tokens.CountBytes(bl.Input)) + int64(tokens.Count(bl.Name))
		}
	}
	sha, err := rec.Hash(b)
	c.msgs = append(c.msgs, m)
	c.tokens = append(c.tokens, n)
	c.shas = append(c.shas, sha)
	return err
}

// estimate is the input_tokens of a request carrying the whole
// conversation: the runtime's count, anchored on the provider's last count
// of the conversation when there is one.
func (c *conversation) estimate(fixed int64) int64 {
	base, from := fixed, 0
	if c.anchorLen > 0 {
		base, from = c.anchor, c.anchorLen
	}
	for _, n := range c.tokens[from:] {
		base += n
	}
	return base
}
