package manifest

import (
	"reflect"
	"sort"
	"strings"
)

var rawType = reflect.TypeOf(Raw{})

// FieldPaths walks the capsule manifest types by their yaml tags and
// returns every leaf field path: a list's items are written "[]", a map's
// keys "*", and a free-form block (Raw, such as config) is one leaf.
func FieldPaths() []string {
	var out []string
	walkFields(reflect.TypeOf(Capsule{}), "", &out)
	sort.Strings(out)
	return out
}

func walkFields(t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawType:
		*out = append(*out, path)
	case t.Kind() == reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			walkFields(f.Type, join(path, name), out)
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.String:
		walkFields(t.Elem(), path+"[]", out)
	case t.Kind() == reflect.Map:
		walkFields(t.Elem(), join(path, "*"), out)
	default:
		*out = append(*out, path)
	}
}
