package diag

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strconv"
	"testing"
)

// TestCatalogueComplete checks that every constant in codes.go has exactly
// one catalogue row, that each row either has an example or says when it is
// decided, and that rows are in code order.
func TestCatalogueComplete(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "codes.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[Code]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if vs.Doc == nil {
				t.Errorf("constant %s has no doc comment", vs.Names[0].Name)
			}
			lit := vs.Values[0].(*ast.BasicLit)
			v, _ := strconv.Unquote(lit.Value)
			consts[Code(v)] = vs.Names[0].Name
		}
	}
	codeRE := regexp.MustCompile(`^[EW]-[A-Z]+(-[A-Z]+)?-[0-9]{3}$`)
	seen := map[Code]bool{}
	for _, e := range Catalogue {
		if !codeRE.MatchString(string(e.Code)) {
			t.Errorf("malformed code %q", e.Code)
		}
		if seen[e.Code] {
			t.Errorf("%s listed twice", e.Code)
		}
		seen[e.Code] = true
		if _, ok := consts[e.Code]; !ok {
			t.Errorf("%s in the catalogue but not a constant", e.Code)
		}
		if (e.Example == "") == (e.Decided == "") {
			t.Errorf("%s: exactly one of Example and Decided must be set", e.Code)
		}
		if e.Example != "" && e.Kind == "" {
			t.Errorf("%s: example without a kind", e.Code)
		}
		if e.Title == "" {
			t.Errorf("%s: no title", e.Code)
		}
	}
	for c, name := range consts {
		if !seen[c] {
			t.Errorf("%s (%s) has no catalogue row", c, name)
		}
	}
	if !sort.SliceIsSorted(Catalogue, func(i, j int) bool { return Catalogue[i].Code < Catalogue[j].Code }) {
		t.Error("catalogue is not in code order")
	}
	// The spec names 74 codes; mur adds its own where the spec names none
	// (the build's payload checks, the registry and store failures, the
	// machine spend meter's file, a declared field this build refuses, the
	// MCP tool server's refusals, what mur replay cannot replay, a running
	// session's refused pull or removal).
	own := []Code{BldComponent, BldWorld, BldNative, BldSkill, RegNotFound, RegUnreachable, RegAuth, RegDigest, RegPin, RegPackage, RegMismatch, RegPublished, RegLock, RegSource, RegUnsigned, RegUntrusted, RegSignature, RegScopeSource, RegOwner, RegAsset, RegKeyless, RunNotHonoured, RunResume, RunConversationRecord, RunReplayCapture, RunReplayRecords, RunInstall, SpendMeter, MCPToken, MCPMalformed, MCPTooLarge, MCPUnknownTool, MCPArguments}
	if len(consts) != 74+len(own) {
		t.Errorf("the specification names 74 codes and mur adds %d; codes.go has %d", len(own), len(consts))
	}
}
