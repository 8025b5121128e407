package hook

import "github.com/murmur/mur/sdk/go/internal/abi"

// InferenceRequest is murmur:runtime/inference's inference-request: the
// messages, an optional system prompt (nil sends none) and an optional
// model (nil is the capsule's inference.model).
type InferenceRequest struct {
	Messages     []Message
	SystemPrompt *string
	Model        *string
}

// InferenceResponse is run-inference's answer: the text, the model the
// host sent, and the host's own token counts of the request and reply.
type InferenceResponse struct {
	Text         string
	ModelUsed    string
	InputTokens  uint64
	OutputTokens uint64
}

// InferenceError is run-inference's err(string): the call was refused or
// failed, and what was sent (if anything) is in the session's trace.
type InferenceError struct{ Msg string }

func (e *InferenceError) Error() string { return e.Msg }

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

// liftInferenceResult lifts the result<inference-response, string>
// run-inference stores at addr: the case at 0 and the payload at 8 (the
// response aligns to 8 for its u64s): text at 8, model-used at 16,
// input-tokens at 24, output-tokens at 32; the err string at 8.
func liftInferenceResult(m abi.Memory, addr uint32) (InferenceResponse, error) {
	if abi.U8(m, addr) != 0 {
		return InferenceResponse{}, &InferenceError{Msg: abi.GetString(m, addr+8)}
	}
	return InferenceResponse{
		Text:         abi.GetString(m, addr+8),
		ModelUsed:    abi.GetString(m, addr+16),
		InputTokens:  abi.U64(m, addr+24),
		OutputTokens: abi.U64(m, addr+32),
	}, nil
}
