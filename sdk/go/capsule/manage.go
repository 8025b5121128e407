package capsule

import "github.com/murmur/mur/sdk/go/internal/abi"

// murmur:artifact-manager/manage@0.1.0: the script's view of its
// session's skills and tools, and pulls and removals under the capsule's
// capabilities.install (docs/install.md). Without the grant every call
// but List answers an error.

// Artifact is manage's artifact-summary.
type Artifact struct {
	Name    string
	Version string
	// Runtime is "wasm" or "native" (runtime-type).
	Runtime string
}

// ArtifactInfo is manage's artifact-info.
type ArtifactInfo struct {
	Artifact
	Description  string
	Tags         []string
	InputSchema  *string
	OutputSchema *string
}

// RuntimeState is manage's runtime-state: the session id, what it has
// installed, and the install grant as JSON.
type RuntimeState struct {
	CapsuleID    string
	Installed    []Artifact
	Capabilities string
}

// ManageError is the err of a manage call: a refusal (beginning with its
// code, such as E-RUN-905) or a call the host does not serve.
type ManageError struct{ Msg string }

func (e *ManageError) Error() string { return "artifact-manager/manage: " + e.Msg }

// runtimeTypes are runtime-type's cases in WIT order (the order is the
// ABI).
var runtimeTypes = []string{"wasm", "native"}

func runtimeOf(b uint8) string {
	if int(b) < len(runtimeTypes) {
		return runtimeTypes[b]
	}
	return ""
}

// liftArtifact lifts an artifact-summary stored at addr (20 bytes, align 4).
func liftArtifact(m abi.Memory, addr uint32) Artifact {
	return Artifact{Name: abi.GetString(m, addr), Version: abi.GetString(m, addr+8), Runtime: runtimeOf(abi.U8(m, addr+16))}
}

// liftArtifacts lifts a list<artifact-summary> whose (ptr, len) is at addr.
func liftArtifacts(m abi.Memory, addr uint32) []Artifact {
	n := abi.U32(m, addr+4)
	out := make([]Artifact, n)
	for i := range out {
		out[i] = liftArtifact(m, abi.U32(m, addr)+uint32(i)*20)
	}
	return out
}

// liftResult reads a result<T, string> at addr: the error's text when it
// is err.
func liftResult(m abi.Memory, addr uint32) (payload uint32, err error) {
	if abi.U8(m, addr) != 0 {
		return 0, &ManageError{Msg: abi.GetString(m, addr+4)}
	}
	return addr + 4, nil
}

// liftInfo lifts an artifact-info stored at addr (60 bytes, align 4).
func liftInfo(m abi.Memory, addr uint32) ArtifactInfo {
	info := ArtifactInfo{
		Artifact:     Artifact{Name: abi.GetString(m, addr), Version: abi.GetString(m, addr+8), Runtime: runtimeOf(abi.U8(m, addr+32))},
		Description:  abi.GetString(m, addr+16),
		InputSchema:  abi.GetOptString(m, addr+36),
		OutputSchema: abi.GetOptString(m, addr+48),
	}
	info.Tags = abi.StringList(m, abi.U32(m, addr+24), abi.U32(m, addr+28))
	return info
}

// liftState lifts a runtime-state stored at addr (24 bytes, align 4).
func liftState(m abi.Memory, addr uint32) RuntimeState {
	return RuntimeState{CapsuleID: abi.GetString(m, addr), Installed: liftArtifacts(m, addr+8), Capabilities: abi.GetString(m, addr+16)}
}
