package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/registrytest"
)

const benchN = 20

// seed publishes benchN small tools into src and returns their refs.
func seed(b *testing.B, src Source) []artifact.Ref {
	b.Helper()
	var refs []artifact.Ref
	for i := range benchN {
		name := fmt.Sprintf("bench/tool-%02d", i)
		p, m := pkg(b, name, "1.0.0")
		r := ref(name + "@1.0.0")
		if _, err := src.Put(context.Background(), r, m, p); err != nil {
			b.Fatal(err)
		}
		refs = append(refs, r)
	}
	return refs
}

func benchInstall(b *testing.B, src Source) {
	refs := seed(b, src)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		proj := ProjectAt(b.TempDir())
		b.StartTimer()
		in := &Installer{Project: proj, Sources: []Source{src}, Check: InstallChecker}
		if _, err := in.Install(context.Background(), refs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInstall20FromStore installs 20 small artifacts from a store on
// disk (the global store) into a fresh project.
func BenchmarkInstall20FromStore(b *testing.B) {
	benchInstall(b, NewLayout("global", b.TempDir()))
}

// BenchmarkInstall20FromRegistry installs 20 small artifacts from the
// in-process OCI registry over loopback HTTP.
func BenchmarkInstall20FromRegistry(b *testing.B) {
	srv := registrytest.New()
	defer srv.Close()
	reg, _ := NewRegistry("bench", config.Registry{URL: srv.URL()})
	benchInstall(b, reg)
}

// BenchmarkInstall20FromDockerRegistry is the same against docker-registry
// (MUR_TEST_REGISTRY=1).
func BenchmarkInstall20FromDockerRegistry(b *testing.B) {
	srv := startRealRegistry(b, "", "")
	reg, _ := NewRegistry("bench", config.Registry{URL: srv.url})
	benchInstall(b, reg)
}

// BenchmarkStage20Pinned is launch resolution of 20 pinned artifacts: lock
// read, each package re-hashed against its pin, unpacked trees found.
func BenchmarkStage20Pinned(b *testing.B) {
	src := NewLayout("global", b.TempDir())
	refs := seed(b, src)
	proj := ProjectAt(b.TempDir())
	in := &Installer{Project: proj, Sources: []Source{src}}
	if _, err := in.Install(context.Background(), refs); err != nil {
		b.Fatal(err)
	}
	var entries []Entry
	for _, r := range refs {
		entries = append(entries, Entry{Name: r.Full(), Version: r.Version, Role: "tool"})
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := proj.Resolve(context.Background(), entries); err != nil {
			b.Fatal(err)
		}
	}
}
