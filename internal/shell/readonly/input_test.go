package readonly

import (
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func TestCheckInputKeyRules(t *testing.T) {
	c, _ := newChecker(t)
	tests := []struct {
		name  string
		input string
		loc   string // "" means allowed
	}{
		{"dest", `{"dest":"tests/x"}`, "dest"},
		{"dest_path", `{"dest_path":"tests/x"}`, "dest_path"},
		{"destination", `{"destination":"tests/x"}`, "destination"},
		{"destination_path", `{"destination_path":"tests/x"}`, "destination_path"},
		{"target_path", `{"target_path":"tests/x"}`, "target_path"},
		{"output_path", `{"output_path":"tests/x"}`, "output_path"},
		{"out_path", `{"out_path":"tests/x"}`, "out_path"},
		{"new_path", `{"new_path":"tests/x"}`, "new_path"},
		{"to", `{"to":"tests/x"}`, "to"},
		{"case and dash folded", `{"Output-Path":"tests/x"}`, "Output-Path"},
		{"dest outside", `{"dest":"src/x"}`, ""},
		{"dest not a string", `{"dest":["tests/x"]}`, ""},
		{"path alone is a read", `{"path":"tests/x"}`, ""},
		{"path + content", `{"path":"tests/x","content":"hi"}`, "path"},
		{"file_path + contents", `{"file_path":"tests/x","contents":""}`, "file_path"},
		{"filepath + text", `{"filepath":"tests/x","text":1}`, "filepath"},
		{"filename + data", `{"filename":"tests/x","data":null}`, "filename"},
		{"file + body", `{"file":"tests/x","body":"b"}`, "file"},
		{"path + new_str", `{"path":"tests/x","new_str":"b"}`, "path"},
		{"path + new_string", `{"path":"tests/x","new_string":"b"}`, "path"},
		{"path + replacement", `{"path":"tests/x","replacement":"b"}`, "path"},
		{"path + patch", `{"path":"tests/x","patch":"b"}`, "path"},
		{"path + diff", `{"path":"tests/x","diff":"b"}`, "path"},
		{"path + folded content key", `{"PATH":"tests/x","New-Str":"b"}`, "PATH"},
		{"pairing is per object", `{"path":"tests/x","edits":[{"content":"x"}]}`, ""},
		{"nested edit list", `{"edits":[{"path":"src/a","content":"x"},{"path":"tests/b","new_string":"y"}]}`, "edits[].path"},
		{"nested dest", `{"opts":{"out":{"to":"tests/x"}}}`, "opts.out.to"},
		{"absolute", `{"dest":"WD/tests/x"}`, "dest"},
		{"outside workdir", `{"dest":"/tmp/x"}`, ""},
		{"unrelated key", `{"repo":"tests"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.ReplaceAll(tt.input, "WD", c.workdir)
			d, err := c.CheckInput("edit", []byte(in), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.loc == "" {
				if d != nil {
					t.Fatalf("refused: %v", d)
				}
				return
			}
			if d == nil || d.Location != tt.loc || d.Tool != "edit" || !strings.HasPrefix(d.Path, "tests") {
				t.Fatalf("got %+v, want refusal at %q", d, tt.loc)
			}
		})
	}
	if _, err := c.CheckInput("t", []byte(`{`), nil); err == nil {
		t.Error("malformed input accepted")
	}
}

const annotated = `{"type":"object","properties":{
  "edits":{"type":"array","items":{"type":"object","properties":{
    "path":{"type":"string","format":"murmur-destination"}}}},
  "note":{"type":"object","format":"murmur-opaque"},
  "blob":{"type":"string","format":"murmur-opaque"},
  "target":{"type":"string","format":"murmur-destination"},
  "ref":{"$ref":"#/defs/x"}}}`

func TestCheckInputAnnotations(t *testing.T) {
	c, _ := newChecker(t)
	tests := []struct {
		name   string
		schema string
		input  string
		loc    string
		rule   string
	}{
		{"declared destination", annotated, `{"target":"tests/x"}`, "target", "declared destination"},
		{"declared destination in array", annotated, `{"edits":[{"path":"tests/x"}]}`, "edits[].path", `"edits[].path"`},
		{"declared destination needs no content key", annotated, `{"edits":[{"path":"src/x"},{"path":"tests/y"}]}`, "edits[].path", ""},
		{"opaque subtree skips key rules", annotated, `{"note":{"dest":"tests/x","path":"tests/y","content":"c"}}`, "", ""},
		{"opaque on a string is ignored", annotated, `{"blob":"x","dest":"tests/x"}`, "dest", "destination key"},
		{"key rules still run beside opaque", annotated, `{"note":{},"to":"tests/x"}`, "to", ""},
		{"annotation behind $ref ignored", `{"type":"object","properties":{"p":{"$ref":"#/x","format":"murmur-destination","type":"string"}}}`,
			`{"p":"tests/x"}`, "", ""},
		{"opaque top level: no key rules", `{"type":"object","format":"murmur-opaque","properties":{"t":{"type":"string","format":"murmur-destination"}}}`,
			`{"dest":"tests/x","path":"tests/y","content":"c"}`, "", ""},
		{"opaque top level: declared destinations still checked", `{"type":"object","format":"murmur-opaque","properties":{"t":{"type":"string","format":"murmur-destination"}}}`,
			`{"t":"tests/x"}`, "t", ""},
		{"destination inside opaque still checked", `{"type":"object","properties":{"n":{"type":"object","format":"murmur-opaque","properties":{"d":{"type":"string","format":"murmur-destination"}}}}}`,
			`{"n":{"d":"tests/x"}}`, "n.d", ""},
		{"derived with suffix", `{"type":"object","properties":{"repo_path":{"type":"string"}},"murmur-destinations":["{repo_path}/.murmur"]}`,
			`{"repo_path":"tests"}`, "repo_path", `"{repo_path}/.murmur"`},
		{"derived suffix makes the path", `{"type":"object","properties":{"repo_path":{"type":"string"}},"murmur-destinations":["{repo_path}/.murmur"]}`,
			`{"repo_path":"bench"}`, "", ""},
		{"derived plain", `{"type":"object","properties":{"r":{"type":"string"}},"murmur-destinations":["{r}"]}`,
			`{"r":"bench/fixtures"}`, "r", ""},
		{"derived array", `{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}}},"murmur-destinations":["{paths[]}"]}`,
			`{"paths":["src","tests/z"]}`, "paths[]", ""},
		{"derived array of objects", annotatedDerived, `{"edits":[{"path":"src"},{"path":"tests/q"}]}`, "edits[].path", "derived"},
		{"empty derived list leaves key rules", `{"type":"object","properties":{"r":{"type":"string"}},"murmur-destinations":[]}`,
			`{"dest":"tests/x"}`, "dest", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchema([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			d, err := c.CheckInput("tool", []byte(tt.input), s)
			if err != nil {
				t.Fatal(err)
			}
			if tt.loc == "" {
				if d != nil {
					t.Fatalf("refused: %+v", d)
				}
				return
			}
			if d == nil || d.Location != tt.loc || !strings.Contains(d.Rule, tt.rule) {
				t.Fatalf("got %+v, want refusal at %q with rule %q", d, tt.loc, tt.rule)
			}
			if !strings.Contains(d.Message(), tt.loc) {
				t.Errorf("message %q does not name the location", d.Message())
			}
		})
	}
}

const annotatedDerived = `{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"}}}}},"murmur-destinations":["{edits[].path}"]}`

func TestDerivedListValidity(t *testing.T) {
	base := `{"type":"object","properties":{"r":{"type":"string"},"dest":{"type":"string"}},"murmur-destinations":%s}`
	tests := []struct {
		list  string
		valid bool
	}{
		{`["{r}"]`, true},
		{`["{r}/a/b"]`, true},
		{`[]`, true},
		{`["r/.murmur"]`, false},
		{`["{r}.murmur"]`, false},
		{`["{r}//x"]`, false},
		{`["{r}/"]`, false},
		{`["{r}/./x"]`, false},
		{`["{r}/../x"]`, false},
		{`["{r}/a\\b"]`, false},
		{`["{nope}"]`, false},
		{`["{}"]`, false},
		{`["{r}", "{nope}"]`, false},
		{`["{r}", 3]`, false},
		{`"{r}"`, false},
	}
	c, _ := newChecker(t)
	for _, tt := range tests {
		s, err := ParseSchema([]byte(strings.Replace(base, "%s", tt.list, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if s.derivedSet != tt.valid {
			t.Errorf("list %s: valid = %v, want %v", tt.list, s.derivedSet, tt.valid)
		}
		// A discarded list leaves the tool judged by key name: dest still
		// refused, and no derived destination checked.
		if !tt.valid {
			if d, _ := c.CheckInput("t", []byte(`{"r":"tests"}`), s); d != nil {
				t.Errorf("list %s: discarded list still checked: %+v", tt.list, d)
			}
			if d, _ := c.CheckInput("t", []byte(`{"dest":"tests/x"}`), s); d == nil {
				t.Errorf("list %s: key rules not applied", tt.list)
			}
		}
	}
}

func TestSchemaWarning(t *testing.T) {
	ro := []string{"tests"}
	tests := []struct {
		name   string
		schema string
		want   []string
	}{
		{"undeclared path and dest", `{"type":"object","properties":{"path":{"type":"string"},"Dest-Path":{"type":"string"},"q":{"type":"string"}}}`,
			[]string{"Dest-Path", "path"}},
		{"destination silences its property only", `{"type":"object","properties":{"path":{"type":"string","format":"murmur-destination"},"to":{"type":"string"}}}`,
			[]string{"to"}},
		{"opaque object silences its subtree", `{"type":"object","properties":{"n":{"type":"object","format":"murmur-opaque","properties":{"file":{"type":"string"}}},"file":{"type":"string"}}}`,
			[]string{"file"}},
		{"opaque on a string silences nothing", `{"type":"object","properties":{"file":{"type":"string","format":"murmur-opaque"}}}`,
			[]string{"file"}},
		{"nested", `{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"}}}}}}`,
			[]string{"edits[].path"}},
		{"derived list silences the tool", `{"type":"object","properties":{"path":{"type":"string"}},"murmur-destinations":[]}`, nil},
		{"malformed derived list does not", `{"type":"object","properties":{"path":{"type":"string"}},"murmur-destinations":["path"]}`, []string{"path"}},
		{"opaque top level", `{"type":"object","format":"murmur-opaque","properties":{"path":{"type":"string"}}}`, nil},
		{"nothing path-shaped", `{"type":"object","properties":{"query":{"type":"string"}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchema([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.PathShaped(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("PathShaped = %q, want %q", got, tt.want)
			}
			w := SchemaWarning(ro, "fs", s)
			if (w != nil) != (tt.want != nil) {
				t.Fatalf("warning = %v", w)
			}
			if w != nil {
				if w.Code != "W-SEC-018" || !strings.Contains(w.Msg, `"fs"`) {
					t.Errorf("warning = %v", w)
				}
				for _, p := range tt.want {
					if !strings.Contains(w.Msg, p) {
						t.Errorf("warning %q does not name %q", w.Msg, p)
					}
				}
			}
			if SchemaWarning(nil, "fs", s) != nil {
				t.Error("warned without read_only")
			}
		})
	}
	if _, err := ParseSchema([]byte(`{`)); err == nil {
		t.Error("malformed schema accepted")
	}
}

func FuzzCheckInput(f *testing.F) {
	f.Add([]byte(annotated), []byte(`{"edits":[{"path":"tests/x"}],"note":{"dest":"x"}}`))
	f.Add([]byte(annotatedDerived), []byte(`{"edits":[{"path":"tests"}]}`))
	f.Add([]byte(``), []byte(`{"path":"../tests","content":1,"to":"/x"}`))
	f.Add([]byte(`{"format":"murmur-opaque","type":"object"}`), []byte(`[1,"a",{"dest":"tests/*"}]`))
	wd := f.TempDir()
	c, err := New(wd, []string{"tests"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, schema, input []byte) {
		s, err := ParseSchema(schema)
		if err != nil {
			return
		}
		d, err := c.CheckInput("t", input, s)
		if err != nil && d != nil {
			t.Fatalf("both a refusal and an error: %v %v", d, err)
		}
		if d != nil && d.Path != "tests" && !strings.HasPrefix(d.Path, "tests/") {
			t.Fatalf("refused uncovered path %q", d.Path)
		}
		_ = s.PathShaped()
	})
}

// FuzzCheckLine checks the read-only check against the parser itself: for
// any line, if the syntax tree holds a write — a write redirection, or
// touch/rm/mkdir — whose word is a literal path under the protected entry,
// the check must refuse the line. Lines that could move the shell (cd,
// pushd, popd, a command named by an expansion) are left to the unit
// tests, since a relative path there names another file.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{"rm -rf tests", "echo x >tests/a 2>&1", "cd tests && sed -i s/a/b/ f", "sudo -u x cp a tests/",
		"dd of=tests/x", "cat <<E\nrm tests\nE\ntee tests/y", "for f in *; do rm \"$f\"; done",
		`x=$(echo ")"); echo y > tests/a`, "echo x > $'tests/a'", "function f { touch tests/a; }", "echo x 1>&tests/a",
		"echo x > /proc/self/cwd/tests/a", "cat <(touch tests/a)", "cat <<EOF\n$(touch tests/a)\nEOF",
		"case $x in a) >tests/a;; esac", "f() ( echo >>tests/b ) & wait", "[[ $(mkdir tests/m) ]]",
		"echo ${x:-$(rm tests/q)}", "coproc { : >|tests/c; }", "time ! touch tests/t | cat", "while :; do &>>tests/w; done"} {
		f.Add(s)
	}
	wd := f.TempDir()
	c, err := New(wd, []string{"tests"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		d := c.CheckLine("bash", line)
		if d != nil && d.Path != "tests" && !strings.HasPrefix(d.Path, "tests/") {
			t.Fatalf("refused uncovered path %q", d.Path)
		}
		if d == nil {
			if w := literalWrite(line); w != "" {
				t.Fatalf("allowed %q, whose syntax tree writes %s", line, w)
			}
		}
	})
}

// literalWrite returns a write the syntax tree of line holds to a literal
// path under tests/ (the fuzz oracle), or "" when there is none or the line
// may change directory first.
func literalWrite(line string) string {
	stmts := parseStmts(syntax.NewParser(syntax.Variant(syntax.LangBash)), line)
	protected := func(w *syntax.Word) bool {
		if w == nil {
			return false
		}
		l := w.Lit()
		return (l == "tests" || strings.HasPrefix(l, "tests/")) && !strings.Contains(l, "..") &&
			!strings.ContainsAny(l, "*?[{\\")
	}
	moves, found := false, ""
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.CallExpr:
				if len(x.Args) == 0 {
					break
				}
				switch name := x.Args[0].Lit(); name {
				case "", "cd", "pushd", "popd", "alias", "enable", "eval":
					moves = true
				case "touch", "rm", "mkdir":
					for _, a := range x.Args[1:] {
						if protected(a) && found == "" {
							found = name + " " + a.Lit()
						}
					}
				}
			case *syntax.FuncDecl:
				moves = true // a function may shadow a command
			case *syntax.Redirect:
				w := false
				switch x.Op {
				case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
					w = true
				case syntax.DplOut:
					w = x.N == nil || x.N.Value == "1"
				}
				if w && protected(x.Word) && found == "" {
					found = x.Op.String() + " " + x.Word.Lit()
				}
			}
			return true
		})
	}
	if moves {
		return ""
	}
	return found
}
