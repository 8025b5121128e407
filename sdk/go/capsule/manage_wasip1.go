//go:build wasip1

package capsule

import (
	"unsafe"

	"github.com/murmur/mur/sdk/go/internal/abi"
)

//go:wasmimport murmur:artifact-manager/manage@0.1.0 list
func manageList(ret unsafe.Pointer)

//go:wasmimport murmur:artifact-manager/manage@0.1.0 describe
func manageDescribe(namePtr unsafe.Pointer, nameLen uint32, ret unsafe.Pointer)

//go:wasmimport murmur:artifact-manager/manage@0.1.0 search
func manageSearch(queryPtr unsafe.Pointer, queryLen uint32, ret unsafe.Pointer)

//go:wasmimport murmur:artifact-manager/manage@0.1.0 pull
func managePull(namePtr unsafe.Pointer, nameLen uint32, versionPtr unsafe.Pointer, versionLen uint32, ret unsafe.Pointer)

//go:wasmimport murmur:artifact-manager/manage@0.1.0 remove
func manageRemove(namePtr unsafe.Pointer, nameLen uint32, ret unsafe.Pointer)

//go:wasmimport murmur:artifact-manager/manage@0.1.0 diagnostics
func manageDiagnostics(ret unsafe.Pointer)

func ptr(s string) (unsafe.Pointer, uint32) {
	return unsafe.Pointer(unsafe.StringData(s)), uint32(len(s))
}

// List is manage.list: the session's skills and tools, declared and
// pulled, sorted by name.
func List() []Artifact {
	manageList(abi.RetArea())
	defer abi.ResetArena()
	return liftArtifacts(abi.Mem, abi.RetAddr())
}

// Describe is manage.describe of one installed skill or tool.
func Describe(name string) (ArtifactInfo, error) {
	p, n := ptr(name)
	manageDescribe(p, n, abi.RetArea())
	defer abi.ResetArena()
	at, err := liftResult(abi.Mem, abi.RetAddr())
	if err != nil {
		return ArtifactInfo{}, err
	}
	return liftInfo(abi.Mem, at), nil
}

// Search is manage.search; mur answers it with an error (pull names an
// exact artifact).
func Search(query string) ([]Artifact, error) {
	p, n := ptr(query)
	manageSearch(p, n, abi.RetArea())
	defer abi.ResetArena()
	at, err := liftResult(abi.Mem, abi.RetAddr())
	if err != nil {
		return nil, err
	}
	return liftArtifacts(abi.Mem, at), nil
}

// Pull is manage.pull: name is <scope>/<name>, version "" the newest that
// fits. The pulled artifact is callable through Invoke at once.
func Pull(name, version string) (Artifact, error) {
	np, nn := ptr(name)
	vp, vn := ptr(version)
	managePull(np, nn, vp, vn, abi.RetArea())
	defer abi.ResetArena()
	at, err := liftResult(abi.Mem, abi.RetAddr())
	if err != nil {
		return Artifact{}, err
	}
	return liftArtifact(abi.Mem, at), nil
}

// Remove is manage.remove of an artifact this session pulled.
func Remove(name string) (bool, error) {
	p, n := ptr(name)
	manageRemove(p, n, abi.RetArea())
	defer abi.ResetArena()
	at, err := liftResult(abi.Mem, abi.RetAddr())
	if err != nil {
		return false, err
	}
	return abi.U8(abi.Mem, at) != 0, nil
}

// Diagnostics is manage.diagnostics.
func Diagnostics() (RuntimeState, error) {
	manageDiagnostics(abi.RetArea())
	defer abi.ResetArena()
	at, err := liftResult(abi.Mem, abi.RetAddr())
	if err != nil {
		return RuntimeState{}, err
	}
	return liftState(abi.Mem, at), nil
}
