package manifest

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/diag"
)

// decoder walks yaml.v3 nodes, so every value keeps its line and column,
// and collects every problem instead of stopping at the first.
type decoder struct {
	file  string
	diags diag.List
	pos   map[string]diag.Pos
}

func newDecoder(file string) *decoder {
	return &decoder{file: file, pos: make(map[string]diag.Pos, 128)}
}

func (d *decoder) at(n *yaml.Node) diag.Pos {
	if n == nil {
		return diag.Pos{File: d.file}
	}
	return diag.Pos{File: d.file, Line: n.Line, Col: n.Column}
}

func (d *decoder) report(code diag.Code, n *yaml.Node, field, format string, args ...any) {
	d.diags = append(d.diags, diag.New(code, d.at(n), field, fmt.Sprintf(format, args...)))
}

// record remembers where a field was written so later checks can point at it.
func (d *decoder) record(field string, n *yaml.Node) {
	if n != nil {
		d.pos[field] = d.at(n)
	}
}

// kindName names a node's kind the way a message should.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "empty"
	}
	return fmt.Sprintf("%q", n.Value)
}

// resolve follows aliases so anchors work like their targets.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 32; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// obj is one YAML mapping being decoded. Keys read through it are marked
// used; rest reports the others. Mappings are small, so keys are kept in
// slices and found by a linear scan, which allocates far less than maps.
type obj struct {
	d      *decoder
	path   string
	n      *yaml.Node
	keys   []string
	knodes []*yaml.Node
	vnodes []*yaml.Node
	used   []bool
	// known is every key a rule read or looked for here, in order: the
	// candidates of an unknown key's "did you mean".
	known []string
}

// ask records key as one this object's rules read.
func (o *obj) ask(key string) {
	for _, k := range o.known {
		if k == key {
			return
		}
	}
	o.known = append(o.known, key)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping opens n as a mapping. A null value is an empty mapping; anything
// else that is not a mapping is E-MAN-002 and yields nil.
func (d *decoder) mapping(n *yaml.Node, path string) *obj {
	n = resolve(n)
	o := &obj{d: d, path: path, n: n}
	if isNull(n) {
		return o
	}
	if n.Kind != yaml.MappingNode {
		d.report(diag.ManType, n, path, "must be a mapping, not %s", kindName(n))
		return nil
	}
	size := len(n.Content) / 2
	o.keys = make([]string, 0, size)
	o.knodes = make([]*yaml.Node, 0, size)
	o.vnodes = make([]*yaml.Node, 0, size)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.report(diag.ManType, k, path, "keys must be strings")
			continue
		}
		key := k.Value
		if o.index(key) >= 0 {
			d.report(diag.ManInvalid, k, join(path, key), "is written twice; keep one")
			continue
		}
		o.keys = append(o.keys, key)
		o.knodes = append(o.knodes, k)
		o.vnodes = append(o.vnodes, v)
		d.record(join(path, key), k)
	}
	o.used = make([]bool, len(o.keys))
	return o
}

func (o *obj) index(key string) int {
	for i, k := range o.keys {
		if k == key {
			return i
		}
	}
	return -1
}

func (o *obj) has(key string) bool { return o.index(key) >= 0 }

// present reports key written with a non-null value: a required field
// written as "key:" with nothing after it is missing. The key counts as
// read either way, so it is not also reported as unknown.
func (o *obj) present(key string) bool {
	o.ask(key)
	i := o.index(key)
	if i < 0 {
		return false
	}
	o.used[i] = true
	return !isNull(o.vnodes[i])
}

// kn is the key node of key, nil when absent.
func (o *obj) kn(key string) *yaml.Node {
	if i := o.index(key); i >= 0 {
		return o.knodes[i]
	}
	return nil
}

// vn is the value node of key as written (not marking it used).
func (o *obj) vn(key string) *yaml.Node {
	if i := o.index(key); i >= 0 {
		return o.vnodes[i]
	}
	return nil
}

// get returns the value node of key, marking it used, or nil when absent.
func (o *obj) get(key string) *yaml.Node {
	o.ask(key)
	i := o.index(key)
	if i < 0 {
		return nil
	}
	o.used[i] = true
	return resolve(o.vnodes[i])
}

func (o *obj) field(key string) string { return join(o.path, key) }

// rest reports every key not read so far with code, or calls fn for each.
func (o *obj) rest(fn func(key string, k *yaml.Node)) {
	for i, key := range o.keys {
		if !o.used[i] {
			fn(key, o.knodes[i])
		}
	}
}

// unknown reports keys no rule read as W-SEC-019: they grant nothing.
func (o *obj) unknown() {
	o.rest(func(key string, k *yaml.Node) {
		if s := diag.Suggest(key, o.known); s != "" {
			o.d.report(diag.SecUnknownKey, k, o.field(key), "is not a recognized key and grants nothing; did you mean '%s'?", s)
			return
		}
		o.d.report(diag.SecUnknownKey, k, o.field(key), "is not a recognized key and grants nothing; remove it or check its spelling")
	})
}

// scalar returns the scalar string at key; present reports presence.
func (o *obj) scalar(key string) (*yaml.Node, bool) {
	n := o.get(key)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.ScalarNode {
		o.d.report(diag.ManType, n, o.field(key), "must be a scalar, not %s", kindName(n))
		return nil, false
	}
	return n, true
}

// str reads a string. Null reads as absent.
func (o *obj) str(key string) *string {
	n, ok := o.scalar(key)
	if !ok || isNull(n) {
		return nil
	}
	s := n.Value
	return &s
}

func (o *obj) strv(key string) string {
	if p := o.str(key); p != nil {
		return *p
	}
	return ""
}

// parseBool accepts the YAML 1.1 spellings the spec writes unquoted.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y":
		return true, true
	case "false", "no", "off", "n":
		return false, true
	}
	return false, false
}

func (o *obj) boolean(key string) *bool {
	n, ok := o.scalar(key)
	if !ok || isNull(n) {
		return nil
	}
	b, ok := parseBool(n.Value)
	if !ok || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		o.d.report(diag.ManType, n, o.field(key), "must be true or false, not %q", n.Value)
		return nil
	}
	return &b
}

// integer reads a whole number; min is the least value allowed.
func (o *obj) integer(key string, min int64) *int64 {
	n, ok := o.scalar(key)
	if !ok || isNull(n) {
		return nil
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil || n.Tag == "!!str" && n.Style != 0 {
		o.d.report(diag.ManType, n, o.field(key), "must be a whole number, not %q", n.Value)
		return nil
	}
	if v < min {
		switch min {
		case 1:
			o.d.report(diag.ManInvalid, n, o.field(key), "must be greater than 0, not %d", v)
		default:
			o.d.report(diag.ManInvalid, n, o.field(key), "must be at least %d, not %d", min, v)
		}
	}
	return &v
}

// number reads a float.
func (o *obj) number(key string) *float64 {
	n, ok := o.scalar(key)
	if !ok || isNull(n) {
		return nil
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		o.d.report(diag.ManType, n, o.field(key), "must be a number, not %q", n.Value)
		return nil
	}
	return &v
}

// enum reads a string that must be one of allowed.
func (o *obj) enum(key string, allowed ...string) string {
	n, ok := o.scalar(key)
	if !ok || isNull(n) {
		return ""
	}
	for _, a := range allowed {
		if n.Value == a {
			return a
		}
	}
	o.d.report(diag.ManInvalid, n, o.field(key), "must be one of %s, not %q", strings.Join(allowed, ", "), n.Value)
	return ""
}

// list reads a sequence; each element is handed to fn with its path.
func (o *obj) list(key string, fn func(i int, path string, n *yaml.Node)) bool {
	n := o.get(key)
	if n == nil {
		return false
	}
	return o.d.seq(n, o.field(key), fn)
}

func (d *decoder) seq(n *yaml.Node, path string, fn func(i int, path string, n *yaml.Node)) bool {
	n = resolve(n)
	if isNull(n) {
		return true
	}
	if n.Kind != yaml.SequenceNode {
		d.report(diag.ManType, n, path, "must be a list, not %s", kindName(n))
		return false
	}
	for i, e := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.record(p, e)
		fn(i, p, resolve(e))
	}
	return true
}

// strings reads a list of strings. The slice is non-nil when the key is
// present, so an explicit [] is told apart from an absent key.
func (o *obj) strings(key string) []string {
	var out []string
	present := o.list(key, func(i int, path string, n *yaml.Node) {
		if n.Kind != yaml.ScalarNode || isNull(n) {
			o.d.report(diag.ManType, n, path, "must be a string, not %s", kindName(n))
			return
		}
		out = append(out, n.Value)
	})
	if present && out == nil && !isNull(o.vn(key)) {
		out = []string{}
	}
	return out
}

// sub opens key as a nested mapping; nil when absent or not a mapping.
func (o *obj) sub(key string) *obj {
	n := o.get(key)
	if n == nil {
		return nil
	}
	return o.d.mapping(n, o.field(key))
}
