//go:build wasip1

//lint:file-ignore U1000 the host calls these through //go:wasmexport

package processdriver

import (
	"errors"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

var errNoDriver = errors.New("process driver registered no Driver: call processdriver.Run from init")

// current returns the registered driver. With none, describe traps (there
// is nothing sensible to describe); launch and parse-line answer errors.
func current() Driver { return driver }

//go:wasmexport murmur:driver/process@0.1.0#describe
func exportDescribe() uint32 {
	if current() == nil {
		panic(errNoDriver)
	}
	return lowerDescription(abi.Mem, current().Describe())
}

//go:wasmexport murmur:driver/process@0.1.0#parse-version
func exportParseVersion(ptr, n uint32) uint32 {
	out := abi.String(abi.Mem, ptr, n)
	abi.ResetArena()
	if current() == nil {
		return lowerVersion(abi.Mem, "", false)
	}
	v, ok := current().ParseVersion(out)
	return lowerVersion(abi.Mem, v, ok)
}

//go:wasmexport murmur:driver/process@0.1.0#launch
func exportLaunch(p uint32) uint32 {
	req := liftLaunchRequest(abi.Mem, p)
	abi.ResetArena()
	if current() == nil {
		return lowerLaunch(abi.Mem, LaunchPlan{}, errNoDriver)
	}
	plan, err := current().Launch(req)
	return lowerLaunch(abi.Mem, plan, err)
}

//go:wasmexport murmur:driver/process@0.1.0#parse-line
func exportParseLine(ptr, n uint32) uint32 {
	line := abi.String(abi.Mem, ptr, n)
	abi.ResetArena()
	if current() == nil {
		return lowerEvents(abi.Mem, nil, errNoDriver)
	}
	events, err := current().ParseLine(line)
	return lowerEvents(abi.Mem, events, err)
}

//go:wasmexport cabi_post_murmur:driver/process@0.1.0#describe
func postDescribe(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:driver/process@0.1.0#parse-version
func postParseVersion(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:driver/process@0.1.0#launch
func postLaunch(uint32) { abi.Release() }

//go:wasmexport cabi_post_murmur:driver/process@0.1.0#parse-line
func postParseLine(uint32) { abi.Release() }
