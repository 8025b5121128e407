//go:build wasip1

//lint:file-ignore U1000 the host calls these through //go:wasmexport

package sessions

import "github.com/murmur/mur/sdk/go/internal/abi"

//go:wasmexport act:sessions-sync/session-provider-sync@0.1.0#get-open-session-args-schema
func exportArgsSchema(metaPtr, metaLen uint32) uint32 {
	abi.ResetArena()
	return argsSchema(abi.Mem)
}

//go:wasmexport cabi_post_act:sessions-sync/session-provider-sync@0.1.0#get-open-session-args-schema
func postArgsSchema(uint32) { abi.Release() }

//go:wasmexport act:sessions-sync/session-provider-sync@0.1.0#open-session
func exportOpenSession(ap, al, mp, ml uint32) uint32 {
	return openSession(abi.Mem, ap, al, abi.ResetArena)
}

//go:wasmexport cabi_post_act:sessions-sync/session-provider-sync@0.1.0#open-session
func postOpenSession(uint32) { abi.Release() }

//go:wasmexport act:sessions-sync/session-provider-sync@0.1.0#close-session
func exportCloseSession(p, n uint32) { closeSession(abi.Mem, p, n, abi.ResetArena) }
