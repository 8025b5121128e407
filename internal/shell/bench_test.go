package shell

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkBareExec is the baseline: fork/exec of the same binary with no
// pipes, environment rows, read-only check or records.
func BenchmarkBareExec(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	for b.Loop() {
		if err := exec.Command(path).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCall is one shell tool call through this package with a no-op
// container: resolve, read-only check, environment, pipes, process group,
// output-holder wait, result and record.
func BenchmarkCall(b *testing.B) {
	f := newFixture(b, func(p *Policy) { p.Allow = []string{"true"}; p.ReadOnly = []string{"tests"} })
	ctx := context.Background()
	for b.Loop() {
		if _, err := f.s.Call(ctx, "true", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallRedirectedServer is a call that starts a background server
// with its output redirected: it holds neither pipe, so the call returns
// without the 1 s holder wait (the goal: well under that window).
func BenchmarkCallRedirectedServer(b *testing.B) {
	f := newFixture(b, nil)
	ctx := context.Background()
	for b.Loop() {
		r, err := f.s.Call(ctx, "bash", `sleep 5 >/dev/null 2>&1 & echo started`)
		if err != nil || r.Note != "" {
			b.Fatalf("%v %q", err, r.Text())
		}
	}
}

// BenchmarkCallContained is the same call through the real sandbox
// (privileged hosts only).
func BenchmarkCallContained(b *testing.B) {
	f, _ := contained(b, func(p *Policy) { p.Allow = []string{"true"} })
	ctx := context.Background()
	for b.Loop() {
		if _, err := f.s.Call(ctx, "true", ""); err != nil {
			b.Fatal(err)
		}
	}
}
