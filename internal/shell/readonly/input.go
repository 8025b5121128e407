package readonly

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// destKeys name a destination on their own; pathKeys name one only beside a
// content key in the same object. Keys are compared folded (see foldKey).
var (
	destKeys = set("dest", "dest_path", "destination", "destination_path", "target_path",
		"output_path", "out_path", "new_path", "to")
	pathKeys    = set("path", "file_path", "filepath", "filename", "file")
	contentKeys = set("content", "contents", "text", "data", "body", "new_str", "new_string",
		"replacement", "patch", "diff")
)

func set(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, k := range s {
		m[k] = true
	}
	return m
}

// foldKey matches tool-input keys case-insensitively with - and _ folded.
func foldKey(k string) string {
	return strings.ReplaceAll(strings.ToLower(k), "-", "_")
}

// Schema is what a tool's input_schema declares about its own input: which
// string properties are destinations, which subtrees are opaque payload, and
// the destinations derived from inputs. The zero value (and nil) declares
// nothing, so the key-name rules judge the whole input.
type Schema struct {
	opaqueTop    bool
	destinations map[string]bool // locations of murmur-destination strings
	opaque       map[string]bool // locations of murmur-opaque objects/arrays
	derived      []derived       // a valid murmur-destinations list
	derivedSet   bool            // a valid list was declared (possibly empty)
	declared     map[string]bool // every location the schema declares
	pathShaped   []string        // properties left to the key-name rules (W-SEC-018)
}

type derived struct {
	raw    string
	loc    string
	suffix string
}

// ParseSchema reads the annotations of a tool's input_schema. An empty
// schema declares nothing; malformed JSON is an error. A malformed
// murmur-destinations list is not an error: it is discarded whole, as the
// spec requires, and the tool is judged as if it declared none.
func ParseSchema(raw []byte) (*Schema, error) {
	s := &Schema{destinations: map[string]bool{}, opaque: map[string]bool{}, declared: map[string]bool{}}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return s, nil
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("parse input_schema: %w", err)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return s, nil
	}
	if _, isRef := obj["$ref"]; !isRef && obj["format"] == "murmur-opaque" && hasType(obj, "object", "array") {
		s.opaqueTop = true
	}
	s.walk(obj, "", false, false)
	if list, ok := obj["murmur-destinations"]; ok {
		s.derived, s.derivedSet = s.parseDerived(list)
	}
	sort.Strings(s.pathShaped)
	return s, nil
}

// walk records annotations at loc. opaque says an enclosing subtree is
// opaque; pathShaped properties there are not left to the key-name rules.
func (s *Schema) walk(node map[string]any, loc string, opaque, top bool) {
	if _, isRef := node["$ref"]; isRef {
		return // annotations behind a $ref are not resolved
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if alts, ok := node[k].([]any); ok {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok {
					s.walk(m, loc, opaque, top)
				}
			}
		}
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for name, v := range props {
			child := join(loc, name)
			s.declared[child] = true
			m, _ := v.(map[string]any)
			if m == nil {
				continue
			}
			_, isRef := m["$ref"]
			dest := !isRef && m["format"] == "murmur-destination" && hasType(m, "string")
			op := !isRef && m["format"] == "murmur-opaque" && hasType(m, "object", "array")
			if dest {
				s.destinations[child] = true
			}
			if op {
				s.opaque[child] = true
			}
			f := foldKey(name)
			if (destKeys[f] || pathKeys[f]) && !dest && !op && !opaque && !s.opaqueTop {
				s.pathShaped = append(s.pathShaped, child)
			}
			s.walk(m, child, opaque || op, false)
		}
	}
	switch items := node["items"].(type) {
	case map[string]any:
		s.declared[loc+"[]"] = true
		s.walk(items, loc+"[]", opaque, false)
	case []any:
		s.declared[loc+"[]"] = true
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				s.walk(m, loc+"[]", opaque, false)
			}
		}
	}
}

func hasType(m map[string]any, want ...string) bool {
	match := func(t string) bool {
		for _, w := range want {
			if t == w {
				return true
			}
		}
		return false
	}
	switch t := m["type"].(type) {
	case string:
		return match(t)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && match(s) {
				return true
			}
		}
	}
	return false
}

func join(loc, key string) string {
	if loc == "" {
		return key
	}
	return loc + "." + key
}

var errDerived = errors.New("malformed murmur-destinations entry")

// parseDerived validates a murmur-destinations list all-or-nothing.
func (s *Schema) parseDerived(v any) ([]derived, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]derived, 0, len(list))
	for _, e := range list {
		str, ok := e.(string)
		if !ok {
			return nil, false
		}
		d, err := s.parseDerivedEntry(str)
		if err != nil {
			return nil, false
		}
		out = append(out, d)
	}
	return out, true
}

func (s *Schema) parseDerivedEntry(e string) (derived, error) {
	if !strings.HasPrefix(e, "{") {
		return derived{}, errDerived
	}
	end := strings.IndexByte(e, '}')
	if end < 0 {
		return derived{}, errDerived
	}
	loc, rest := e[1:end], e[end+1:]
	if loc == "" || !s.declared[loc] {
		return derived{}, errDerived
	}
	d := derived{raw: e, loc: loc}
	if rest == "" {
		return d, nil
	}
	suffix, ok := strings.CutPrefix(rest, "/")
	if !ok || strings.Contains(suffix, `\`) {
		return derived{}, errDerived
	}
	for _, c := range strings.Split(suffix, "/") {
		if c == "" || c == "." || c == ".." {
			return derived{}, errDerived
		}
	}
	d.suffix = suffix
	return d, nil
}

// PathShaped lists the properties the schema leaves to the key-name rules
// whose names are path- or destination-shaped; a valid murmur-destinations
// list (even empty) silences the whole tool. W-SEC-018 names them.
func (s *Schema) PathShaped() []string {
	if s == nil || s.derivedSet {
		return nil
	}
	return append([]string(nil), s.pathShaped...)
}

// CheckInput checks one tool call's JSON input against the read_only
// entries: the key-name rules (unless the schema's top level is opaque,
// and never inside an opaque subtree), every declared destination, and
// every derived destination. Paths resolve against the workdir. A nil
// schema declares nothing.
func (c *Checker) CheckInput(tool string, input []byte, s *Schema) (*Denial, error) {
	if !c.Active() {
		return nil, nil
	}
	if s == nil {
		s = &Schema{}
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return nil, fmt.Errorf("parse tool input: %w", err)
	}
	d := c.walkInput(v, "", false, s)
	if d == nil {
		for _, dd := range s.derived {
			for _, str := range stringsAt(v, dd.loc) {
				p := str
				if dd.suffix != "" {
					p = strings.TrimSuffix(str, "/") + "/" + dd.suffix
				}
				if d = c.check(p, "", fmt.Sprintf("the derived destination %q", dd.raw)); d != nil {
					d.Location = dd.loc
					break
				}
			}
			if d != nil {
				break
			}
		}
	}
	if d != nil {
		d.Tool = tool
	}
	return d, nil
}

func (c *Checker) walkInput(v any, loc string, opaque bool, s *Schema) *Denial {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // a stable first refusal
		if !opaque && !s.opaqueTop {
			if d := c.keyRules(x, keys, loc); d != nil {
				return d
			}
		}
		for _, k := range keys {
			child := join(loc, k)
			if str, ok := x[k].(string); ok && s.destinations[child] {
				if d := c.check(str, "", fmt.Sprintf("the declared destination %q", child)); d != nil {
					d.Location = child
					return d
				}
			}
			if d := c.walkInput(x[k], child, opaque || s.opaque[child], s); d != nil {
				return d
			}
		}
	case []any:
		for _, e := range x {
			if d := c.walkInput(e, loc+"[]", opaque, s); d != nil {
				return d
			}
		}
	}
	return nil
}

// keyRules applies the two key-name rules to one object.
func (c *Checker) keyRules(obj map[string]any, keys []string, loc string) *Denial {
	hasContent := false
	for _, k := range keys {
		if contentKeys[foldKey(k)] {
			hasContent = true
			break
		}
	}
	for _, k := range keys {
		str, ok := obj[k].(string)
		if !ok {
			continue
		}
		f := foldKey(k)
		var rule string
		switch {
		case destKeys[f]:
			rule = fmt.Sprintf("the destination key %q", k)
		case pathKeys[f] && hasContent:
			rule = fmt.Sprintf("the path key %q beside content in the same object", k)
		default:
			continue
		}
		if d := c.check(str, "", rule); d != nil {
			d.Location = join(loc, k)
			return d
		}
	}
	return nil
}

// stringsAt returns every string at a location such as edits[].path.
func stringsAt(v any, loc string) []string {
	var out []string
	var rec func(v any, rest string)
	rec = func(v any, rest string) {
		if rest == "" {
			switch x := v.(type) {
			case string:
				out = append(out, x)
			case []any:
				// {paths[]} names the array's strings; a bare array
				// location names them too.
				for _, e := range x {
					if s, ok := e.(string); ok {
						out = append(out, s)
					}
				}
			}
			return
		}
		if after, ok := strings.CutPrefix(rest, "[]"); ok {
			arr, _ := v.([]any)
			after = strings.TrimPrefix(after, ".")
			for _, e := range arr {
				rec(e, after)
			}
			return
		}
		key, after := rest, ""
		if i := strings.IndexAny(rest, ".["); i >= 0 {
			key, after = rest[:i], strings.TrimPrefix(rest[i:], ".")
		}
		if m, ok := v.(map[string]any); ok {
			if child, ok := m[key]; ok {
				rec(child, after)
			}
		}
	}
	rec(v, loc)
	return out
}
