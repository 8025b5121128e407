package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Raw is a free-form block (artifacts[].config, inference.driver.config)
// kept as written, so it re-encodes in declaration order.
type Raw struct {
	node *yaml.Node
}

// Node returns the YAML node as written.
func (r *Raw) Node() *yaml.Node { return r.node }

// IsMapping reports whether the block is a YAML mapping.
func (r *Raw) IsMapping() bool {
	n := resolve(r.node)
	return n != nil && n.Kind == yaml.MappingNode
}

// MarshalYAML re-emits the block as written.
func (r *Raw) MarshalYAML() (any, error) { return r.node, nil }

// MarshalJSON renders the block as compact JSON in declaration order.
func (r *Raw) MarshalJSON() ([]byte, error) { return r.JSON() }

// errNotJSON is the sentinel for a block that cannot travel as JSON.
var errNotJSON = errors.New("does not serialize to JSON")

// JSON renders the block as compact JSON, keys in declaration order,
// numbers staying numbers: the bytes MURMUR_ARTIFACT_CONFIG carries.
func (r *Raw) JSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, r.node, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// maxRawJSON bounds what a block may expand to: aliases can make a small
// file expand exponentially, and no block is useful past this size.
const maxRawJSON = 4 << 20

func writeJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	n = resolve(n)
	if b.Len() > maxRawJSON {
		return fmt.Errorf("expands to more than %d bytes: %w", maxRawJSON, errNotJSON)
	}
	if depth > 100 {
		return fmt.Errorf("nested deeper than 100 levels: %w", errNotJSON)
	}
	if n == nil {
		b.WriteString("null")
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return writeJSON(b, n.Content[0], depth+1)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
				return fmt.Errorf("key at line %d is not a string: %w", k.Line, errNotJSON)
			}
			if k.Tag != "!!str" && k.Tag != "" {
				return fmt.Errorf("key %q at line %d is not a string: %w", k.Value, k.Line, errNotJSON)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			ks, _ := json.Marshal(k.Value)
			b.Write(ks)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			v, _ := parseBool(n.Value)
			b.WriteString(strconv.FormatBool(v))
		case "!!int":
			v, err := strconv.ParseInt(n.Value, 0, 64)
			if err != nil {
				return fmt.Errorf("integer %q at line %d: %w", n.Value, n.Line, errNotJSON)
			}
			b.WriteString(strconv.FormatInt(v, 10))
		case "!!float":
			v, err := strconv.ParseFloat(n.Value, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("number %q at line %d: %w", n.Value, n.Line, errNotJSON)
			}
			fs, _ := json.Marshal(v)
			b.Write(fs)
		default:
			s, _ := json.Marshal(n.Value)
			b.Write(s)
		}
	default:
		return fmt.Errorf("unsupported YAML at line %d: %w", n.Line, errNotJSON)
	}
	return nil
}
