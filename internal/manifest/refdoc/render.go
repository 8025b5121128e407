package main

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// field is one field the engine decodes: its path and YAML type. Its
// default and codes are looked up by path.
type field struct {
	path, typ string
}

// walk lists every YAML field of t under prefix, depth first in
// declaration order.
func walk(t reflect.Type, prefix string, out *[]field) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		ft := f.Type
		*out = append(*out, field{path: path, typ: typeName(ft)})
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct && ft != rawType:
			walk(ft, path, out)
		case ft.Kind() == reflect.Slice && elem(ft).Kind() == reflect.Struct && elem(ft) != rawType:
			walk(elem(ft), path+"[]", out)
		case ft.Kind() == reflect.Map && elem(ft).Kind() == reflect.Struct && elem(ft) != rawType:
			walk(elem(ft), path+".<key>", out)
		}
	}
}

var rawType = reflect.TypeOf(manifest.Raw{})

func elem(t reflect.Type) reflect.Type {
	t = t.Elem()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// typeName is the YAML type of a Go field type.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawType {
		return "any"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		if e := elem(t); e.Kind() == reflect.Struct && e != rawType {
			return "list of mappings"
		}
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "mapping of " + typeName(t.Elem())
	case reflect.Struct:
		return "mapping"
	}
	return t.Kind().String()
}

// minimal is the smallest capsule whose Effective shows every default: each
// block present, empty.
const minimal = "name: x\nversion: \"1\"\nartifacts:\n  - name: a/t\n    version: \"1\"\ncapabilities: {}\ncontext: {}\ninference: {}\nlifecycle: {}\ntrace: {}\nobservability: {}\n"

// defaults reads the scalar defaults Effective applies, by field path
// (list items as []).
func defaults() (map[string]string, error) {
	c, _ := manifest.ParseCapsule("murmur.yaml", []byte(minimal))
	if c == nil {
		return nil, fmt.Errorf("the minimal capsule does not parse")
	}
	b, err := yaml.Marshal(c.Effective())
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var visit func(n *yaml.Node, path string)
	visit = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			visit(n.Content[0], path)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				visit(n.Content[i+1], p)
			}
		case yaml.SequenceNode:
			if len(n.Content) == 0 {
				out[path] = "`[]`"
			}
			for _, c := range n.Content {
				visit(c, path+"[]")
			}
		case yaml.ScalarNode:
			out[path] = "`" + n.Value + "`"
		}
	}
	visit(&root, "")
	// The placeholders of the minimal capsule are not defaults.
	for _, k := range []string{"name", "version", "artifacts[].name", "artifacts[].version", "context.record_store"} {
		delete(out, k)
	}
	return out, nil
}

var indexRE = regexp.MustCompile(`\[[0-9]+\]`)

// codesByField runs every catalogue example and notes, for the field each
// diagnostic names, the code its row is about.
func codesByField() map[string][]string {
	out := map[string][]string{}
	for _, e := range diag.Catalogue {
		if e.Example == "" {
			continue
		}
		var ds diag.List
		prefix := "capsule:"
		if e.Kind == diag.Artifact {
			prefix = "artifact:"
			a, pds := manifest.ParseArtifact("murmur.yaml", []byte(e.Example))
			ds = pds
			if a != nil {
				ds = append(ds, a.CheckPublishable()...)
			}
		} else {
			_, ds = manifest.ParseCapsule("murmur.yaml", []byte(e.Example))
		}
		for _, d := range ds {
			if d.Code != e.Code || d.Field == "" {
				continue
			}
			p := prefix + indexRE.ReplaceAllString(d.Field, "[]")
			if !contains(out[p], string(e.Code)) {
				out[p] = append(out[p], string(e.Code))
			}
		}
	}
	return out
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Render builds the page.
func Render() ([]byte, error) {
	defs, err := defaults()
	if err != nil {
		return nil, err
	}
	codes := codesByField()
	var buf bytes.Buffer
	buf.WriteString(header)

	var art []field
	walk(reflect.TypeOf(manifest.Artifact{}), "", &art)
	buf.WriteString("## The artifact manifest\n\n" + artifactIntro + "\n\n| Field | Type | Default | Meaning | Codes |\n| --- | --- | --- | --- | --- |\n")
	for _, f := range art {
		writeRow(&buf, f, artifactDefaults[f.path], artifactMeanings[f.path], codes["artifact:"+f.path])
	}

	// manifest.Fields is the engine's own table of what a run does with
	// each capsule field (honoured, refused, warned, read elsewhere).
	rows := map[string]manifest.Field{}
	for _, f := range manifest.Fields {
		rows[f.Path] = f
	}
	var caps []field
	walk(reflect.TypeOf(manifest.Capsule{}), "", &caps)
	buf.WriteString("\n## The capsule manifest\n\n" + capsuleIntro + "\n")
	section := ""
	for _, f := range caps {
		top, _, _ := strings.Cut(f.path, ".")
		top, _, _ = strings.Cut(top, "[")
		if top != section {
			section = top
			fmt.Fprintf(&buf, "\n### `%s`\n\n", top)
			if m := capsuleMeanings[top]; m != "" {
				buf.WriteString(m + "\n\n")
			}
			buf.WriteString("| Field | Type | Default | What this build does with it | Codes |\n| --- | --- | --- | --- | --- |\n")
		}
		c := codes["capsule:"+f.path]
		does := "—"
		if row, ok := rows[strings.ReplaceAll(f.path, "<key>", "*")]; ok {
			does = string(row.Status) + ": " + row.Why
			if row.When != "" {
				does += " (refused when " + row.When + ")"
			}
			if row.Code != "" && !contains(c, string(row.Code)) {
				c = append(c, string(row.Code))
			}
		}
		sort.Strings(c)
		fmt.Fprintf(&buf, "| `%s` | %s | %s | %s | %s |\n", f.path, f.typ, orDash(defs[f.path]), strings.ReplaceAll(does, "|", "\\|"), codeLinks(c))
	}
	return buf.Bytes(), nil
}

func writeRow(buf *bytes.Buffer, f field, def, meaning string, codes []string) {
	sort.Strings(codes)
	fmt.Fprintf(buf, "| `%s` | %s | %s | %s | %s |\n", f.path, f.typ, orDash(def), orDash(meaning), codeLinks(codes))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func codeLinks(codes []string) string {
	if len(codes) == 0 {
		return ""
	}
	var l []string
	for _, c := range codes {
		l = append(l, fmt.Sprintf("[`%s`](diagnostics.md#%s)", c, strings.ToLower(c)))
	}
	return strings.Join(l, ", ")
}
