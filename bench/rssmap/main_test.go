package main

import (
	"debug/elf"
	"os"
	"reflect"
	"testing"
)

func TestOwner(t *testing.T) {
	tests := []struct{ sym, want string }{
		{"runtime.mallocgc", "runtime"},
		{"github.com/murmur/mur/internal/tokens.Count", "github.com/murmur/mur/internal/tokens"},
		{"github.com/murmur/mur/internal/tokens/vocab.Table.Rank", "github.com/murmur/mur/internal/tokens/vocab"},
		{"go.yaml.in/yaml/v3.(*parser).node", "go.yaml.in/yaml/v3"},
		{"go:string.*", "go:string"},
		{"type:*", "type:*"},
		{"_ZN8wasmtime7runtime6module6Module3new17h0123456789abcdefE", "rust:wasmtime"},
		{"_ZN4core3ptr13drop_in_place17hE", "rust:core"},
		{"_ZN63_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..Drop$GT$4drop17hE", "rust:alloc"},
		{"_RNvCs1234_5crate4func", "rust(v0)"},
		{"memcpy", "c:memcpy"},
	}
	for _, tt := range tests {
		if got := owner(tt.sym); got != tt.want {
			t.Errorf("owner(%q) = %q, want %q", tt.sym, got, tt.want)
		}
	}
}

// selfText returns this test binary's path and the smaps mapping holding
// its code.
func selfText(t *testing.T) (string, *mapping) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	maps, err := readSmaps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	pc := uint64(reflect.ValueOf(TestOwner).Pointer())
	for _, m := range maps {
		if m.start <= pc && pc < m.end {
			if m.path != exe || m.perms[2] != 'x' {
				t.Fatalf("code at %#x is in %q (%s), want %q executable", pc, m.path, m.perms, exe)
			}
			if m.kB["Rss"] == 0 || m.kB["Size"] == 0 {
				t.Fatalf("smaps fields of the code mapping not read: %v", m.kB)
			}
			return exe, m
		}
	}
	t.Fatalf("no mapping holds this function's code (%#x)", pc)
	return "", nil
}

// The page holding running code is resident, and its file offset is where
// the ELF file puts that code.
func TestResidentPagesSelf(t *testing.T) {
	exe, m := selfText(t)
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer pm.Close()
	pages, err := residentPages(pm, m)
	if err != nil {
		t.Fatal(err)
	}
	pc := uint64(reflect.ValueOf(TestOwner).Pointer())
	want := m.off + (pc-m.start)/pageSize*pageSize
	found := false
	for _, p := range pages {
		found = found || p.off == want
	}
	if !found {
		t.Fatalf("the page at file offset %#x (this code) is not among %d resident pages", want, len(pages))
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	if want < text.Offset/pageSize*pageSize || want >= text.Offset+text.Size {
		t.Errorf("offset %#x is outside .text [%#x, %#x)", want, text.Offset, text.Offset+text.Size)
	}
}

// pclnParts splits .gopclntab into its tables, in order, inside it.
func TestPclnPartsSelf(t *testing.T) {
	exe, _ := selfText(t)
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parts := pclnParts(f)
	if len(parts) != 6 {
		t.Fatalf("%d pclntab tables, want 6", len(parts))
	}
	sec := f.Section(".gopclntab")
	prev := sec.Offset
	for _, p := range parts {
		if p.start < prev || p.end <= p.start || p.end > sec.Offset+sec.Size {
			t.Errorf("%s spans [%#x, %#x), outside or before %#x", p.name, p.start, p.end, prev)
		}
		prev = p.end
	}
	if parts[len(parts)-1].end != sec.Offset+sec.Size {
		t.Errorf("the _func records end at %#x, the section at %#x", parts[len(parts)-1].end, sec.Offset+sec.Size)
	}
}
