package hook

import "github.com/murmur/mur/sdk/go/internal/abi"

// Lifting of each event from its flat parameters (records of at most 16
// flat values travel flattened; inference-event, with 17, travels as a
// pointer to its memory layout), and lowering of result<hook-output,
// string>: disc u8 @0, payload @4; hook-output disc u8 @4, payload @8.
const (
	resultSize  = 16
	resultAlign = 4
)

func liftStage(m abi.Memory, listPtr, listLen uint32) StageEvent {
	return StageEvent{ShellAllow: abi.StringList(m, listPtr, listLen)}
}

func liftSession(m abi.Memory, p0, n0, p1, n1, p2, n2, p3, n3, lp, ln uint32) SessionContext {
	return SessionContext{
		CapsuleName:    abi.String(m, p0, n0),
		CapsuleVersion: abi.String(m, p1, n1),
		SessionID:      abi.String(m, p2, n2),
		Model:          abi.String(m, p3, n3),
		Capabilities:   abi.StringList(m, lp, ln),
	}
}

func liftTaskStart(m abi.Memory, p0, n0, p1, n1, p2, n2 uint32, inputBytes uint64) TaskStartEvent {
	return TaskStartEvent{
		TaskID:     abi.String(m, p0, n0),
		ContextID:  abi.String(m, p1, n1),
		Source:     abi.String(m, p2, n2),
		InputBytes: inputBytes,
	}
}

func liftTaskEnd(m abi.Memory, p0, n0, p1, n1 uint32) TaskEndEvent {
	return TaskEndEvent{TaskID: abi.String(m, p0, n0), ExitStatus: abi.String(m, p1, n1)}
}

// liftInference reads an inference-event from its memory layout (size 80,
// align 8): turn @0, input-tokens @8, output-tokens @16, decision @24,
// tool-name @32, prompt @44, output @56, tools @68.
func liftInference(m abi.Memory, p uint32) InferenceEvent {
	return InferenceEvent{
		Turn:         abi.U32(m, p),
		InputTokens:  abi.U64(m, p+8),
		OutputTokens: abi.U64(m, p+16),
		Decision:     abi.GetString(m, p+24),
		ToolName:     abi.GetOptString(m, p+32),
		Prompt:       abi.GetOptString(m, p+44),
		Output:       abi.GetOptString(m, p+56),
		Tools:        abi.GetOptString(m, p+68),
	}
}

func liftTool(m abi.Memory, turn, p0, n0 uint32, in, out, dur uint64, p1, n1 uint32) ToolEvent {
	return ToolEvent{
		Turn:        turn,
		ToolName:    abi.String(m, p0, n0),
		InputBytes:  in,
		OutputBytes: out,
		DurationMS:  dur,
		Status:      abi.String(m, p1, n1),
	}
}

func liftShell(m abi.Memory, turn, p0, n0, p1, n1, code, p2, n2, p3, n3 uint32, outBytes, errBytes, dur uint64) ShellEvent {
	return ShellEvent{
		Turn:        turn,
		Binary:      abi.String(m, p0, n0),
		Command:     abi.String(m, p1, n1),
		ExitCode:    int32(code),
		Stdout:      abi.String(m, p2, n2),
		Stderr:      abi.String(m, p3, n3),
		StdoutBytes: outBytes,
		StderrBytes: errBytes,
		DurationMS:  dur,
	}
}

func liftCompaction(m abi.Memory, lp, ln uint32, tokens uint64, threshold float64, md, mp, mn, sd, sp, sn uint32) CompactionEvent {
	return CompactionEvent{
		Messages:      liftMessages(m, lp, ln),
		SessionTokens: tokens,
		Threshold:     threshold,
		Model:         abi.OptString(m, md, mp, mn),
		SystemPrompt:  abi.OptString(m, sd, sp, sn),
	}
}

func liftSessionEnd(m abi.Memory, turns uint32, in, out uint64, tools, shells uint32, dur uint64, p, n uint32) SessionEndEvent {
	return SessionEndEvent{
		TotalTurns:        turns,
		TotalInputTokens:  in,
		TotalOutputTokens: out,
		TotalToolCalls:    tools,
		TotalShellCalls:   shells,
		DurationMS:        dur,
		ExitStatus:        abi.String(m, p, n),
	}
}

func liftMessages(m abi.Memory, ptr, n uint32) []Message {
	pairs := abi.Pairs(m, ptr, n)
	msgs := make([]Message, len(pairs))
	for i, kv := range pairs {
		msgs[i] = Message{Role: kv[0], Content: kv[1]}
	}
	return msgs
}

// lowerResult stores a handler's answer and returns its address.
func lowerResult(m abi.Memory, out Output, err error) uint32 {
	p := m.Alloc(resultSize, resultAlign)
	if err != nil {
		abi.PutU8(m, p, 1)
		abi.PutString(m, p+4, err.Error())
		return p
	}
	abi.PutU8(m, p+4, uint8(out.Kind))
	switch out.Kind {
	case KindReplaceContext:
		pairs := make([][2]string, len(out.Messages))
		for i, msg := range out.Messages {
			pairs[i] = [2]string{msg.Role, msg.Content}
		}
		abi.PutPairs(m, p+8, pairs)
	case KindWriteManifests:
		pairs := make([][2]string, len(out.Manifests))
		for i, tm := range out.Manifests {
			pairs[i] = [2]string{tm.BinaryName, tm.Content}
		}
		abi.PutPairs(m, p+8, pairs)
	case KindArtifact, KindReopenTask:
		abi.PutString(m, p+8, out.Text)
	}
	return p
}
