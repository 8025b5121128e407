//go:build wasip1

//lint:file-ignore U1000 the host calls these through //go:wasmexport

package act

import "github.com/murmur/mur/sdk/go/internal/abi"

//go:wasmexport act:tools-sync/tool-provider-sync@0.1.0#list-tools
func exportListTools(metaPtr, metaLen uint32) uint32 {
	abi.ResetArena()
	return listTools(abi.Mem)
}

//go:wasmexport cabi_post_act:tools-sync/tool-provider-sync@0.1.0#list-tools
func postListTools(uint32) { abi.Release() }

//go:wasmexport act:tools-sync/tool-provider-sync@0.1.0#call-tool
func exportCallTool(np, nl, ap, al, mp, ml uint32) uint32 {
	return callTool(abi.Mem, np, nl, ap, al, mp, ml, abi.ResetArena)
}

//go:wasmexport cabi_post_act:tools-sync/tool-provider-sync@0.1.0#call-tool
func postCallTool(uint32) { abi.Release() }
