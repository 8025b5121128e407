package artifact

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"fmt"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// Binary kinds a .wasm file can be, read from its preamble.
const (
	WasmComponent = "a WebAssembly component"
	WasmModule    = "a core WebAssembly module"
	WasmNot       = "not WebAssembly"
)

// WasmKind reads the preamble of b: the magic \0asm, then the version
// and layer fields that tell a component (layer 1) from a core module.
func WasmKind(b []byte) string {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return WasmNot
	}
	if b[6] == 1 && b[7] == 0 {
		return WasmComponent
	}
	return WasmModule
}

// ComponentFile is the component of a wasm artifact as the runtime picks
// it: the first .wasm its requires_files lists. i is that entry's index.
func (b *Built) ComponentFile() (f Entry, i int, ok bool) {
	for i, f := range b.Files {
		if strings.HasSuffix(f.Path, ".wasm") {
			return f, i, true
		}
	}
	return Entry{}, -1, false
}

// InstallPath is where file rel of the package named name sits in an
// installed tree: tools/<name>/<rel>.
func InstallPath(name, rel string) string { return "tools/" + name + "/" + rel }

// ComponentID keys the compile cache for the component at installPath
// (InstallPath) of the package with digest: the one formula mur build,
// which compiles a component into the cache, and a launch, which reads
// it there, share.
func ComponentID(digest, installPath string) [32]byte {
	return sha256.Sum256([]byte("mur-component\x00" + digest + "\x00" + installPath))
}

// CheckNative refuses a native artifact with no executable built for
// goos/goarch: the runtime runs the first executable requires_files
// lists, so that one must be an ELF (Linux) or Mach-O (macOS) binary for
// this processor, or a #! script the kernel hands to its interpreter.
func CheckNative(b *Built, goos, goarch string) diag.List {
	a := b.Manifest
	for i, f := range b.Files {
		if !f.Exec {
			continue
		}
		field := fmt.Sprintf("requires_files[%d]", i)
		if problem := nativeProblem(f.Data, goos, goarch); problem != "" {
			return diag.List{diag.New(diag.BldNative, a.Pos(field), field, fmt.Sprintf("%q is the native tool's executable (the first executable requires_files lists) but %s; build it for %s/%s", f.Path, problem, goos, goarch))}
		}
		return nil
	}
	return diag.List{diag.New(diag.BldNative, a.Pos("requires_files"), "requires_files", fmt.Sprintf("a native %s ships no executable: list its binary in requires_files and make it executable (chmod +x)", a.Runtime))}
}

// elfMachines maps GOARCH to the ELF machine of its binaries.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "386": elf.EM_386, "arm": elf.EM_ARM,
	"riscv64": elf.EM_RISCV, "ppc64le": elf.EM_PPC64, "ppc64": elf.EM_PPC64, "s390x": elf.EM_S390,
	"loong64": elf.EM_LOONGARCH, "mips64le": elf.EM_MIPS, "mips64": elf.EM_MIPS,
}

// machoCPUs maps GOARCH to the Mach-O CPU of its binaries.
var machoCPUs = map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}

// nativeProblem says why data is not an executable for goos/goarch, or "".
func nativeProblem(data []byte, goos, goarch string) string {
	if bytes.HasPrefix(data, []byte("#!")) {
		return ""
	}
	if ef, err := elf.NewFile(bytes.NewReader(data)); err == nil {
		if goos == "darwin" || goos == "windows" {
			return "it is an ELF binary, which " + goos + " does not run"
		}
		if ef.Type != elf.ET_EXEC && ef.Type != elf.ET_DYN {
			return fmt.Sprintf("it is an ELF %s, not an executable", ef.Type)
		}
		if want, ok := elfMachines[goarch]; ok && ef.Machine != want {
			return fmt.Sprintf("it is built for %s, not %s", ef.Machine, goarch)
		}
		return ""
	}
	if mf, err := macho.NewFile(bytes.NewReader(data)); err == nil {
		if goos != "darwin" {
			return "it is a macOS (Mach-O) binary"
		}
		if want, ok := machoCPUs[goarch]; ok && mf.Cpu != want {
			return fmt.Sprintf("it is built for %s, not %s", mf.Cpu, goarch)
		}
		return ""
	}
	if _, err := macho.NewFatFile(bytes.NewReader(data)); err == nil {
		if goos != "darwin" {
			return "it is a macOS (Mach-O) binary"
		}
		return ""
	}
	if WasmKind(data) != WasmNot {
		return "it is WebAssembly; a WebAssembly tool is implementation: wasm"
	}
	return "it is neither a binary this platform runs nor a #! script"
}

// CheckSkill refuses a skill that ships no skill.md, or one that is empty
// or not UTF-8 text: it is what the model reads.
func CheckSkill(b *Built) diag.List {
	a := b.Manifest
	for i, f := range b.Files {
		if !strings.EqualFold(f.Path, "skill.md") {
			continue
		}
		field := fmt.Sprintf("requires_files[%d]", i)
		switch {
		case len(bytes.TrimSpace(f.Data)) == 0:
			return diag.List{diag.New(diag.BldSkill, a.Pos(field), field, "skill.md is empty: write the instructions the model reads")}
		case !utf8.Valid(f.Data):
			return diag.List{diag.New(diag.BldSkill, a.Pos(field), field, "skill.md is not UTF-8 text: save it as UTF-8")}
		}
		return nil
	}
	return diag.List{diag.New(diag.BldSkill, a.Pos("requires_files"), "requires_files", "a skill ships its instructions as skill.md: add the file and list it in requires_files")}
}

// CheckPayloadFormat runs the checks that need no WebAssembly engine: a
// native artifact's executable, a skill's skill.md, and that a wasm
// artifact's component is a component at all. The component's compile
// and world checks are the caller's (they need wasmtime).
func CheckPayloadFormat(b *Built) diag.List {
	a := b.Manifest
	switch a.ExecutionType() {
	case manifest.ExecNative:
		return CheckNative(b, runtime.GOOS, runtime.GOARCH)
	case manifest.ExecStatic:
		if a.Runtime == manifest.RoleSkill {
			return CheckSkill(b)
		}
		return nil
	}
	f, i, ok := b.ComponentFile()
	if !ok {
		// E-BLD-003 already refuses a wasm artifact with no .wasm listed.
		return nil
	}
	field := fmt.Sprintf("requires_files[%d]", i)
	if kind := WasmKind(f.Data); kind != WasmComponent {
		hint := "build it with tools/guest/build.sh (or wasm-tools component new) into a component"
		return diag.List{diag.New(diag.BldComponent, a.Pos(field), field, fmt.Sprintf("%q is %s, not a WebAssembly component; %s", f.Path, kind, hint))}
	}
	return nil
}
