// Package inference makes one completion through the capsule's own
// inference driver (murmur:runtime/inference@0.2.0 run-inference): the
// same driver, gateway, spend ceilings, retries and trace as the agent's
// own turns, with no fallback to another model. Hooks (sdk/go/hook's
// RunInference) and tool components call it:
//
//	r, err := inference.Run(inference.Request{Messages: []inference.Message{{Role: "user", Content: text}}})
//
// The time it takes counts against the caller's deadline; under
// transport: process, or in a script capsule, the host refuses it
// (docs/host-imports.md). Run exists only in a wasip1 guest.
package inference

import "github.com/murmur/mur/sdk/go/internal/abi"

// Message is one message of the conversation sent: role "user" or
// "assistant", and its text.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is inference-request: the messages, an optional system prompt
// (nil sends none) and an optional model (nil is the capsule's
// inference.model).
type Request struct {
	Messages     []Message
	SystemPrompt *string
	Model        *string
}

// Response is run-inference's answer: the text, the model the host sent,
// and the host's own token counts of the request and reply.
type Response struct {
	Text         string
	ModelUsed    string
	InputTokens  uint64
	OutputTokens uint64
}

// Error is run-inference's err(string): the call was refused or failed,
// and what was sent (if anything) is in the session's trace.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// messageSize is record message's size: role and content, each a (ptr,
// len) pair.
const messageSize = 16

// lowerMessages stores msgs as a list<message> in m and returns its
// (ptr, len).
func lowerMessages(m abi.Memory, msgs []Message) (uint32, uint32) {
	if len(msgs) == 0 {
		return 4, 0
	}
	base := m.Alloc(uint32(len(msgs))*messageSize, 4)
	for i, msg := range msgs {
		at := base + uint32(i)*messageSize
		abi.PutString(m, at, msg.Role)
		abi.PutString(m, at+8, msg.Content)
	}
	return base, uint32(len(msgs))
}

// liftResult lifts the result<inference-response, string> run-inference
// stores at addr: the case at 0 and the payload at 8 (the response aligns
// to 8 for its u64s): text at 8, model-used at 16, input-tokens at 24,
// output-tokens at 32; the err string at 8.
func liftResult(m abi.Memory, addr uint32) (Response, error) {
	if abi.U8(m, addr) != 0 {
		return Response{}, &Error{Msg: abi.GetString(m, addr+8)}
	}
	return Response{
		Text:         abi.GetString(m, addr+8),
		ModelUsed:    abi.GetString(m, addr+16),
		InputTokens:  abi.U64(m, addr+24),
		OutputTokens: abi.U64(m, addr+32),
	}, nil
}
