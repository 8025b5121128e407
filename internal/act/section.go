// Package act hosts ACT (Agent Component Tools, spec 003) components: it
// reads their act:component custom section without instantiating them,
// converts the model's JSON arguments to deterministic CBOR and back, and
// calls their tool and session providers through the component runtime.
package act

import (
	"errors"
	"fmt"
	"sort"

	"github.com/fxamacker/cbor/v2"
)

// SectionName is the custom section that carries a component's metadata.
const SectionName = "act:component"

// ErrNoSection means a binary has no act:component custom section; spec
// 003 has the host reject such a component.
var ErrNoSection = errors.New("no act:component custom section")

// ErrMalformed means a binary or its act:component section cannot be read.
var ErrMalformed = errors.New("malformed ACT component")

// Info is the std table of the act:component section.
type Info struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Description is the plain description, or the localized ones by
	// BCP 47 tag.
	Description     string            `json:"description,omitempty"`
	Descriptions    map[string]string `json:"descriptions,omitempty"`
	DefaultLanguage string            `json:"default_language,omitempty"`
	// Capabilities maps each declared capability identifier to its
	// parameters, as JSON.
	Capabilities map[string]any `json:"capabilities,omitempty"`
}

// CapabilityNames returns the declared capability identifiers, sorted.
func (i Info) CapabilityNames() []string {
	names := make([]string, 0, len(i.Capabilities))
	for k := range i.Capabilities {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Wasm binary layout: a preamble (magic and version) then sections, each
// an id byte, a LEB128 size and that many bytes. A component nests core
// modules (section 1) and components (section 4) with their own preamble.
const (
	sectionCustom        = 0
	sectionCoreModule    = 1
	sectionComponent     = 4
	maxNesting           = 8
	preambleLen          = 8
	maxSectionNameLength = 1 << 16
)

var magic = [4]byte{0x00, 'a', 's', 'm'}

// ReadSection finds the act:component section of a component (or core
// module) binary and decodes its std table. It reads only section
// headers: nothing is compiled or run. The top level is searched first,
// then nested modules and components, where a guest toolchain that writes
// the section into its core module leaves it.
func ReadSection(wasm []byte) (Info, error) {
	data, err := findSection(wasm, 0)
	if err != nil {
		return Info{}, err
	}
	if data == nil {
		return Info{}, ErrNoSection
	}
	return DecodeSection(data)
}

// findSection returns the payload of the first act:component section at
// this level, else of the first found in a nested module or component;
// nil when there is none.
func findSection(b []byte, depth int) ([]byte, error) {
	if len(b) < preambleLen || [4]byte(b[:4]) != magic {
		return nil, fmt.Errorf("%w: not a WebAssembly binary (no \\0asm preamble)", ErrMalformed)
	}
	// Bytes 6-7 are the layer: 1 for a component, 0 for a core module,
	// whose sections 1 and 4 are its type and table sections.
	component := b[6] == 1 && b[7] == 0
	var nested [][]byte
	for off := preambleLen; off < len(b); {
		id := b[off]
		size, n := uleb32(b[off+1:])
		if n == 0 {
			return nil, fmt.Errorf("%w: section at byte %d has a bad size", ErrMalformed, off)
		}
		start := off + 1 + n
		end := start + int(size)
		if end > len(b) || end < start {
			return nil, fmt.Errorf("%w: section at byte %d runs past the end of the binary", ErrMalformed, off)
		}
		body := b[start:end]
		switch id {
		case sectionCustom:
			nameLen, m := uleb32(body)
			if m == 0 || nameLen > maxSectionNameLength || m+int(nameLen) > len(body) {
				return nil, fmt.Errorf("%w: custom section at byte %d has a bad name", ErrMalformed, off)
			}
			if string(body[m:m+int(nameLen)]) == SectionName {
				return body[m+int(nameLen):], nil
			}
		case sectionCoreModule, sectionComponent:
			if component {
				nested = append(nested, body)
			}
		}
		off = end
	}
	if depth >= maxNesting {
		return nil, nil
	}
	for _, inner := range nested {
		if d, err := findSection(inner, depth+1); err != nil || d != nil {
			return d, err
		}
	}
	return nil, nil
}

// uleb32 decodes an unsigned LEB128 of at most 5 bytes; n is 0 when b
// does not start with one.
func uleb32(b []byte) (v uint32, n int) {
	var shift uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		if i == 4 && c > 0x0f {
			return 0, 0
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, 0
}

// sectionDecMode refuses duplicate map keys and indefinite nesting past a
// small depth: the section is untrusted input.
var sectionDecMode = func() cbor.DecMode {
	m, err := cbor.DecOptions{DupMapKey: cbor.DupMapKeyEnforcedAPF, MaxNestedLevels: 32, DefaultMapType: jsonMapType}.DecMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// DecodeSection decodes an act:component section's CBOR: a map of
// namespaced tables of which std is read. Unknown namespaces and keys are
// ignored, as the spec requires; std.name and std.version must be there.
func DecodeSection(data []byte) (Info, error) {
	var top map[string]cbor.RawMessage
	if err := sectionDecMode.Unmarshal(data, &top); err != nil {
		return Info{}, fmt.Errorf("%w: the %s section is not a CBOR map of tables: %w", ErrMalformed, SectionName, err)
	}
	raw, ok := top["std"]
	if !ok {
		return Info{}, fmt.Errorf("%w: the %s section has no std table (it must hold name and version)", ErrMalformed, SectionName)
	}
	var std map[string]cbor.RawMessage
	if err := sectionDecMode.Unmarshal(raw, &std); err != nil {
		return Info{}, fmt.Errorf("%w: %s std is not a map: %w", ErrMalformed, SectionName, err)
	}
	var info Info
	str := func(key string, dst *string, required bool) error {
		v, ok := std[key]
		if !ok {
			if required {
				return fmt.Errorf("%w: %s std.%s is missing; the ACT spec requires it", ErrMalformed, SectionName, key)
			}
			return nil
		}
		if err := sectionDecMode.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%w: %s std.%s is not a text string", ErrMalformed, SectionName, key)
		}
		if required && *dst == "" {
			return fmt.Errorf("%w: %s std.%s is empty", ErrMalformed, SectionName, key)
		}
		return nil
	}
	if err := str("name", &info.Name, true); err != nil {
		return Info{}, err
	}
	if err := str("version", &info.Version, true); err != nil {
		return Info{}, err
	}
	if err := str("default-language", &info.DefaultLanguage, false); err != nil {
		return Info{}, err
	}
	if v, ok := std["description"]; ok {
		if err := sectionDecMode.Unmarshal(v, &info.Description); err != nil {
			if err := sectionDecMode.Unmarshal(v, &info.Descriptions); err != nil {
				return Info{}, fmt.Errorf("%w: %s std.description is neither a text string nor a map of language to text", ErrMalformed, SectionName)
			}
		}
	}
	if v, ok := std["capabilities"]; ok {
		var caps map[string]cbor.RawMessage
		if err := sectionDecMode.Unmarshal(v, &caps); err != nil {
			return Info{}, fmt.Errorf("%w: %s std.capabilities is not a map: %w", ErrMalformed, SectionName, err)
		}
		info.Capabilities = make(map[string]any, len(caps))
		for k, c := range caps {
			j, err := ToJSONValue(c)
			if err != nil {
				return Info{}, fmt.Errorf("%w: %s std.capabilities[%q]: %w", ErrMalformed, SectionName, k, err)
			}
			info.Capabilities[k] = j
		}
	}
	return info, nil
}

// EncodeSection is the CBOR of an act:component section holding info's
// std table, deterministically encoded (for SDK builds and fixtures).
func EncodeSection(info Info) ([]byte, error) {
	std := map[string]any{"name": info.Name, "version": info.Version}
	switch {
	case len(info.Descriptions) > 0:
		std["description"] = info.Descriptions
	case info.Description != "":
		std["description"] = info.Description
	}
	if info.DefaultLanguage != "" {
		std["default-language"] = info.DefaultLanguage
	}
	if len(info.Capabilities) > 0 {
		std["capabilities"] = info.Capabilities
	}
	return encMode.Marshal(map[string]any{"std": std})
}

// AppendSection returns wasm with an act:component custom section holding
// section appended at its top level (custom sections may appear anywhere
// in a module or component).
func AppendSection(wasm, section []byte) []byte {
	name := []byte(SectionName)
	body := append(appendULEB(nil, uint32(len(name))), name...)
	body = append(body, section...)
	out := append([]byte{}, wasm...)
	out = append(out, sectionCustom)
	out = appendULEB(out, uint32(len(body)))
	return append(out, body...)
}

func appendULEB(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}
