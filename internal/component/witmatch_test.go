package component

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// witShapes maps "package/interface.type" to the Go type mirroring it.
var witShapes = map[string]any{
	"murmur:tool/run.status":                      Status(""),
	"murmur:tool/run.tool-input":                  ToolInput{},
	"murmur:tool/run.tool-result":                 ToolResult{},
	"murmur:hook/lifecycle.message":               Message{},
	"murmur:hook/lifecycle.tool-manifest":         ToolManifest{},
	"murmur:hook/lifecycle.session-context":       SessionContext{},
	"murmur:hook/lifecycle.stage-event":           StageEvent{},
	"murmur:hook/lifecycle.task-start-event":      TaskStartEvent{},
	"murmur:hook/lifecycle.task-end-event":        TaskEndEvent{},
	"murmur:hook/lifecycle.inference-event":       InferenceEvent{},
	"murmur:hook/lifecycle.tool-event":            ToolEvent{},
	"murmur:hook/lifecycle.shell-event":           ShellEvent{},
	"murmur:hook/lifecycle.compaction-event":      CompactionEvent{},
	"murmur:hook/lifecycle.session-end-event":     SessionEndEvent{},
	"murmur:runtime/inference.inference-request":  InferenceRequest{},
	"murmur:runtime/inference.inference-response": InferenceResponse{},
	"murmur:message/send.message":                 PeerMessage{},
	"murmur:message/send.task-result":             PeerTaskResult{},
	"murmur:shell/execute.shell-result":           ShellResult{},
	"murmur:task-io/read.task-text":               TaskText{},
	"murmur:conversation/read.entry":              ConversationEntry{},
	"murmur:conversation/read.page":               ConversationPage{},
}

var (
	rePackage   = regexp.MustCompile(`(?m)^package ([a-z0-9-]+:[a-z0-9-]+)@`)
	reInterface = regexp.MustCompile(`(?m)^interface ([a-z0-9-]+) \{`)
	reType      = regexp.MustCompile(`(?ms)^\s*(record|enum) ([a-z0-9-]+) \{(.*?)\n\s*\}`)
	reComment   = regexp.MustCompile(`(?m)^\s*///.*$`)
)

// witTypes reads every record and enum of every .wit file under ../../wit:
// key → field "name: type" strings (records) or case names (enums).
func witTypes(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("../../wit/*/*.wit")
	if err != nil || len(files) == 0 {
		t.Fatalf("no .wit files found: %v", err)
	}
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := reComment.ReplaceAllString(string(b), "")
		pkg := rePackage.FindStringSubmatch(src)
		if pkg == nil {
			continue
		}
		ifaces := reInterface.FindAllStringSubmatchIndex(src, -1)
		for i, m := range ifaces {
			end := len(src)
			if i+1 < len(ifaces) {
				end = ifaces[i+1][0]
			}
			name := src[m[2]:m[3]]
			for _, tm := range reType.FindAllStringSubmatch(src[m[1]:end], -1) {
				var items []string
				for _, it := range splitTop(tm[3]) {
					if it = strings.Join(strings.Fields(it), " "); it != "" {
						items = append(items, it)
					}
				}
				out[pkg[1]+"/"+name+"."+tm[2]] = items
			}
		}
	}
	return out
}

// witTypeOf renders the WIT type a Go type maps to.
func witTypeOf(t reflect.Type, names map[reflect.Type]string) string {
	if n, ok := names[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Uint32:
		return "u32"
	case reflect.Uint64:
		return "u64"
	case reflect.Int32:
		return "s32"
	case reflect.Float64:
		return "f64"
	case reflect.Pointer:
		return "option<" + witTypeOf(t.Elem(), names) + ">"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "list<u8>"
		}
		return "list<" + witTypeOf(t.Elem(), names) + ">"
	case reflect.Array:
		parts := make([]string, t.Len())
		for i := range parts {
			parts[i] = witTypeOf(t.Elem(), names)
		}
		return "tuple<" + strings.Join(parts, ", ") + ">"
	}
	return "?" + t.String()
}

// TestGoTypesMatchWIT fails when a .wit record or enum and its Go mirror
// disagree on a field's name, order or type, or on an enum's cases.
func TestGoTypesMatchWIT(t *testing.T) {
	wit := witTypes(t)
	names := map[reflect.Type]string{}
	for key, v := range witShapes {
		names[reflect.TypeOf(v)] = key[strings.LastIndex(key, ".")+1:]
	}
	for key, v := range witShapes {
		want, ok := wit[key]
		if !ok {
			t.Errorf("%s: not found in wit/", key)
			continue
		}
		typ := reflect.TypeOf(v)
		var got []string
		switch typ.Kind() {
		case reflect.String: // enum: cases are the constants' values, checked below
			got = enumCases(typ)
		case reflect.Struct:
			for i := 0; i < typ.NumField(); i++ {
				f := typ.Field(i)
				got = append(got, f.Tag.Get("wit")+": "+witTypeOf(f.Type, names))
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s:\n go:  %q\n wit: %q", key, got, want)
		}
	}
}

func enumCases(t reflect.Type) []string {
	switch t {
	case reflect.TypeFor[Status]():
		return []string{string(StatusPassed), string(StatusFailed), string(StatusError)}
	case reflect.TypeFor[InterruptMode]():
		return []string{string(InterruptStdinMessage), string(InterruptSignalInt), string(InterruptUnsupported)}
	}
	return nil
}

// splitTop splits s at commas outside angle brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
