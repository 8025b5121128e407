package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestReferenceUpToDate fails when docs/manifest-reference.md is not what
// the manifest engine's types, defaults and catalogue make it: run
// `make docs-manifest` and commit the page.
func TestReferenceUpToDate(t *testing.T) {
	want, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../../../docs/manifest-reference.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatal("docs/manifest-reference.md is out of date: run `make docs-manifest` and commit it")
	}
}

// TestReferenceCoversTheEngine checks that the walk reaches deep fields of
// both manifests, every artifact field has a meaning, and the engine's
// defaults and codes appear where they belong.
func TestReferenceCoversTheEngine(t *testing.T) {
	page, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, want := range []string{
		"| `artifacts[].gateway.api_key` | string |",
		"| `capabilities.limits.memory_bytes` | integer | `536870912` | honoured: WASM store limit |",
		"| `inference.retry.max_retries` | integer | `6` |",
		"| `lifecycle.task_acceptance` | string | `single` |",
		"| `inference.model` | string | — | honoured: the model the driver is asked for |",
		"[`E-CAP-002`](diagnostics.md#e-cap-002)",
		"| `name` | string | — | The bare name",
		"[`E-BLD-001`](diagnostics.md#e-bld-001)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the reference lacks %q", want)
		}
	}
	art, _, _ := strings.Cut(s, "## The capsule manifest")
	for _, f := range strings.Split(art, "\n") {
		if strings.HasPrefix(f, "| `") && strings.Contains(f, "| — | — |") {
			t.Errorf("artifact field without a meaning: %s", f)
		}
	}
}
