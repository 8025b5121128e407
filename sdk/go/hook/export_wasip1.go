//go:build wasip1

//lint:file-ignore U1000 the host calls these through //go:wasmexport

package hook

import "github.com/murmur/mur/sdk/go/internal/abi"

// Every handler is exported, including the optional on-task-start and
// on-task-end: a Go hook answers none for events it has no handler for.
// Each export copies its event out of the arena, resets the arena, runs
// the handler and returns its lowered result, freed by post-return.

func answer(out Output, err error) uint32 { return lowerResult(abi.Mem, out, err) }

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-stage
func onStage(lp, ln uint32) uint32 {
	e := liftStage(abi.Mem, lp, ln)
	abi.ResetArena()
	return answer(dispatch(current().OnStage, e))
}

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-session-start
func onSessionStart(p0, n0, p1, n1, p2, n2, p3, n3, lp, ln uint32) uint32 {
	e := liftSession(abi.Mem, p0, n0, p1, n1, p2, n2, p3, n3, lp, ln)
	abi.ResetArena()
	return answer(dispatch(current().OnSessionStart, e))
}

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-task-start
func onTaskStart(p0, n0, p1, n1, p2, n2 uint32, inputBytes uint64) uint32 {
	e := liftTaskStart(abi.Mem, p0, n0, p1, n1, p2, n2, inputBytes)
	abi.ResetArena()
	return answer(dispatch(current().OnTaskStart, e))
}

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-inference
func onInference(p uint32) uint32 {
	e := liftInference(abi.Mem, p)
	abi.ResetArena()
	return answer(dispatch(current().OnInference, e))
}

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-tool-call
func onToolCall(turn, p0, n0 uint32, in, out, dur uint64, p1, n1 uint32) uint32 {
	e := liftTool(abi.Mem, turn, p0, n0, in, out, dur, p1, n1)
	abi.ResetArena()
	return answer(dispatch(current().OnToolCall, e))
}

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-shell
func onShell(turn, p0, n0, p1, n1, code, p2, n2, p3, n3 uint32, outBytes, errBytes, dur uint64) uint32 {
	e := liftShell(abi.Mem, turn, p0, n0, p1, n1, code, p2, n2, p3, n3, outBytes, errBytes, dur)
	abi.ResetArena()
	return answer(dispatch(current().OnShell, e))
}

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-compaction
func onCompaction(lp, ln uint32, tokens uint64, threshold float64, md, mp, mn, sd, sp, sn uint32) uint32 {
	e := liftCompaction(abi.Mem, lp, ln, tokens, threshold, md, mp, mn, sd, sp, sn)
	abi.ResetArena()
	return answer(dispatch(current().OnCompaction, e))
}

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-task-end
func onTaskEnd(p0, n0, p1, n1 uint32) uint32 {
	e := liftTaskEnd(abi.Mem, p0, n0, p1, n1)
	abi.ResetArena()
	return answer(dispatch(current().OnTaskEnd, e))
}

//go:wasmexport murmur:hook/lifecycle@0.5.0#on-session-end
func onSessionEnd(turns uint32, in, out uint64, tools, shells uint32, dur uint64, p, n uint32) uint32 {
	e := liftSessionEnd(abi.Mem, turns, in, out, tools, shells, dur, p, n)
	abi.ResetArena()
	return answer(dispatch(current().OnSessionEnd, e))
}

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-stage
func postStage(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-session-start
func postSessionStart(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-task-start
func postTaskStart(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-inference
func postInference(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-tool-call
func postToolCall(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-shell
func postShell(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-compaction
func postCompaction(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-task-end
func postTaskEnd(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:hook/lifecycle@0.5.0#on-session-end
func postSessionEnd(uint32) { abi.Release() }
