// Command rssmap shows what of a running process is resident and why:
// /proc/<pid>/smaps summed per mapped file (Rss, Pss, private, anonymous),
// then, for each mapped ELF file (the mur binary, a compiled component's
// .cwasm), which of its pages are mapped in the process (from
// /proc/<pid>/pagemap) by section and by the symbols' packages (Go) or
// crates (Rust), so a launch's touched code and data can be named.
//
//	rssmap -pid N [-top 40] [-min 64] [-sections]
//
// Reading pagemap needs root (or CAP_SYS_ADMIN) for the present bits of
// another process.
package main

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	pid := flag.Int("pid", 0, "process to inspect")
	top := flag.Int("top", 40, "packages/crates to list per ELF file")
	minK := flag.Int64("min", 64, "list sections and packages with at least this many resident KiB")
	flag.BoolVar(&bySection, "sections", false, "split each package's resident bytes by the section holding them")
	flag.Parse()
	if *pid == 0 {
		fmt.Fprintln(os.Stderr, "rssmap: -pid is required")
		os.Exit(2)
	}
	if err := run(*pid, *top, *minK); err != nil {
		fmt.Fprintf(os.Stderr, "rssmap: %v\n", err)
		os.Exit(1)
	}
}

// bySection is -sections.
var bySection bool

// mapping is one line of smaps with the fields this tool reports.
type mapping struct {
	start, end, off uint64
	perms, path     string
	kB              map[string]int64
}

func readSmaps(pid int) ([]*mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*mapping
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, _ := strings.Cut(fields[0], "-")
			m := &mapping{perms: fields[1], kB: map[string]int64{}}
			m.start, _ = strconv.ParseUint(lo, 16, 64)
			m.end, _ = strconv.ParseUint(hi, 16, 64)
			m.off, _ = strconv.ParseUint(fields[2], 16, 64)
			if len(fields) >= 6 {
				m.path = strings.Join(fields[5:], " ")
			}
			out = append(out, m)
			continue
		}
		if len(out) == 0 || len(fields) < 2 {
			continue
		}
		k := strings.TrimSuffix(fields[0], ":")
		if n, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
			out[len(out)-1].kB[k] = n
		}
	}
	return out, sc.Err()
}

func run(pid, top int, minK int64) error {
	maps, err := readSmaps(pid)
	if err != nil {
		return err
	}
	// Per file (anonymous mappings grouped as [anon]).
	type sum struct {
		size, rss, pss, priv, anon int64
		n                          int
	}
	per := map[string]*sum{}
	var total sum
	for _, m := range maps {
		name := m.path
		if name == "" {
			name = "[anon]"
		}
		s := per[name]
		if s == nil {
			s = &sum{}
			per[name] = s
		}
		add := func(s *sum) {
			s.size += m.kB["Size"]
			s.rss += m.kB["Rss"]
			s.pss += m.kB["Pss"]
			s.priv += m.kB["Private_Clean"] + m.kB["Private_Dirty"]
			s.anon += m.kB["Anonymous"]
			s.n++
		}
		add(s)
		add(&total)
	}
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return per[names[i]].rss > per[names[j]].rss })
	fmt.Printf("pid %d: per mapped file (KiB)\n", pid)
	fmt.Printf("%9s %9s %9s %9s %9s %4s  %s\n", "Size", "Rss", "Pss", "Private", "Anon", "maps", "file")
	for _, n := range names {
		s := per[n]
		if s.rss == 0 {
			continue
		}
		fmt.Printf("%9d %9d %9d %9d %9d %4d  %s\n", s.size, s.rss, s.pss, s.priv, s.anon, s.n, n)
	}
	fmt.Printf("%9d %9d %9d %9d %9d %4d  total\n", total.size, total.rss, total.pss, total.priv, total.anon, total.n)
	// Anonymous mappings one by one: the Go heap arenas, goroutine and
	// thread stacks, wasm linear memories and tables are told apart by
	// size and permissions.
	fmt.Printf("\nanonymous mappings with at least %d KiB resident (KiB)\n%9s %9s %5s  %s\n", minK, "Size", "Rss", "perms", "address")
	for _, m := range maps {
		if m.path == "" && m.kB["Rss"] >= minK {
			fmt.Printf("%9d %9d %5s  %x-%x\n", m.kB["Size"], m.kB["Rss"], m.perms, m.start, m.end)
		}
	}

	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return err
	}
	defer pm.Close()
	// Per ELF file: resident file offsets (page granularity), with whether
	// the page is anonymous (a private copy written by the process).
	files := map[string][]page{}
	var order []string
	for _, m := range maps {
		if !strings.HasPrefix(m.path, "/") || m.kB["Rss"] == 0 {
			continue
		}
		pages, err := residentPages(pm, m)
		if err != nil {
			return err
		}
		if _, ok := files[m.path]; !ok {
			order = append(order, m.path)
		}
		files[m.path] = append(files[m.path], pages...)
	}
	for _, path := range order {
		secOf, err := explain(path, files[path], top, minK)
		if err != nil {
			fmt.Printf("\n%s: %v\n", path, err)
		}
		if err := folios(files[path], secOf); err != nil {
			fmt.Printf("  folios: %v\n", err)
		}
	}
	return nil
}

// Page flags of /proc/kpageflags (linux/kernel-page-flags.h).
const (
	kpfHead = 1 << 15
	kpfTail = 1 << 16
)

// folios reports the page-cache folios the resident pages belong to: on
// a kernel with large folios a fault may map a whole folio, so the folio
// sizes say how coarse "touched" is. A folio's size is read from
// /proc/kpageflags: its head page and the tail pages after it.
func folios(pages []page, secOf func(off uint64) string) error {
	kf, err := os.Open("/proc/kpageflags")
	if err != nil {
		return err
	}
	defer kf.Close()
	flags := func(pfn uint64) uint64 {
		var b [8]byte
		if _, err := kf.ReadAt(b[:], int64(pfn*8)); err != nil {
			return 0
		}
		return binary.LittleEndian.Uint64(b[:])
	}
	type folio struct {
		size, mapped int
		first        uint64 // lowest file offset mapped from it
	}
	heads := map[uint64]*folio{}
	for _, p := range pages {
		if p.pfn == 0 || p.anon {
			continue
		}
		head := p.pfn
		for head > 0 && flags(head)&kpfTail != 0 {
			head--
		}
		f := heads[head]
		if f == nil {
			f = &folio{size: 1, first: p.off}
			if flags(head)&kpfHead != 0 {
				for flags(head+uint64(f.size))&kpfTail != 0 {
					f.size++
				}
			}
			heads[head] = f
		}
		f.mapped++
		f.first = min(f.first, p.off)
	}
	if len(heads) == 0 {
		return nil
	}
	type bucket struct{ folios, pages, mapped int }
	bySize := map[int]*bucket{}
	for _, f := range heads {
		b := bySize[f.size]
		if b == nil {
			b = &bucket{}
			bySize[f.size] = b
		}
		b.folios++
		b.pages += f.size
		b.mapped += f.mapped
	}
	sizes := make([]int, 0, len(bySize))
	for s := range bySize {
		sizes = append(sizes, s)
	}
	sort.Ints(sizes)
	fmt.Printf("  page-cache folios holding the resident pages:\n  %10s %7s %12s %12s\n", "folio KiB", "folios", "mapped KiB", "of folio KiB")
	for _, s := range sizes {
		b := bySize[s]
		fmt.Printf("  %10d %7d %12d %12d\n", s*4, b.folios, b.mapped*4, b.pages*4)
	}
	// Where the large ones lie: one touch of any of their pages maps all.
	type big struct {
		off  uint64
		size int
	}
	var bigs []big
	for _, f := range heads {
		if f.size >= 64 {
			bigs = append(bigs, big{f.first, f.size})
		}
	}
	sort.Slice(bigs, func(i, j int) bool { return bigs[i].off < bigs[j].off })
	for _, b := range bigs {
		name := ""
		if secOf != nil {
			name = secOf(b.off)
			if end := secOf(b.off + uint64(b.size)*pageSize - 1); end != name {
				name += ".." + end
			}
		}
		fmt.Printf("  folio of %5d KiB at file offset %#9x  %s\n", b.size*4, b.off, name)
	}
	return nil
}

// page is one resident page of a mapped file.
type page struct {
	off  uint64 // file offset
	pfn  uint64 // physical frame (0 without root)
	anon bool   // a private (copy-on-write) copy, not the page cache's
}

const pageSize = 4096

// residentPages reads the present bit of every page of m from pagemap.
func residentPages(pm *os.File, m *mapping) ([]page, error) {
	n := (m.end - m.start) / pageSize
	buf := make([]byte, 8*n)
	if _, err := pm.ReadAt(buf, int64(m.start/pageSize*8)); err != nil {
		return nil, fmt.Errorf("pagemap of %s: %w", m.path, err)
	}
	var out []page
	for i := range n {
		e := binary.LittleEndian.Uint64(buf[8*i:])
		if e&(1<<63) == 0 {
			continue
		}
		// Bit 61: the page is file-backed or shared anonymous; clear for a
		// private anonymous page (a written copy of a file page).
		out = append(out, page{off: m.off + i*pageSize, pfn: e & (1<<55 - 1), anon: e&(1<<61) == 0})
	}
	return out, nil
}

// secSum is a section (or a named range inside one) and its resident KiB.
type secSum struct {
	name       string
	size, kB   int64
	anon       int64
	start, end uint64
}

// pclnParts splits a Go binary's .gopclntab into the tables its header
// (runtime.pcHeader) locates: which of them a run touches tells stack
// walking (pctab, the _func records) from name lookups (funcnametab,
// filetab: tracebacks, runtime.FuncForPC).
func pclnParts(f *elf.File) []*secSum {
	sec := f.Section(".gopclntab")
	if sec == nil {
		return nil
	}
	var h [72]byte
	if _, err := sec.ReadAt(h[:], 0); err != nil {
		return nil
	}
	le := binary.LittleEndian
	nfunc := le.Uint64(h[8:])
	offs := []struct {
		name string
		at   uint64
	}{
		{"  pcln: funcnametab", le.Uint64(h[32:])},
		{"  pcln: cutab", le.Uint64(h[40:])},
		{"  pcln: filetab", le.Uint64(h[48:])},
		{"  pcln: pctab", le.Uint64(h[56:])},
		{"  pcln: ftab", le.Uint64(h[64:])},
		{"  pcln: _func records", le.Uint64(h[64:]) + (nfunc+1)*8},
		{"", sec.Size},
	}
	var out []*secSum
	for i := 0; i+1 < len(offs); i++ {
		lo, hi := offs[i].at, offs[i+1].at
		if hi <= lo || hi > sec.Size {
			return nil // not the layout this tool knows
		}
		out = append(out, &secSum{name: offs[i].name, size: int64(hi - lo), start: sec.Offset + lo, end: sec.Offset + hi})
	}
	return out
}

// explain attributes the resident pages of an ELF file to its sections
// and to the packages of the symbols they hold.
func explain(path string, pages []page, top int, minK int64) (secOf func(off uint64) string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Printf("\n%s: %d KiB resident (%d KiB private copies)\n", path, len(pages)*4, countAnon(pages)*4)
	var secs []*secSum
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Size == 0 || s.Flags&elf.SHF_ALLOC == 0 && s.Addr != 0 {
			continue
		}
		secs = append(secs, &secSum{name: s.Name, size: int64(s.Size), start: s.Offset, end: s.Offset + s.Size})
	}
	secs = append(secs, pclnParts(f)...)
	// Smallest first, so that a page's first match is the pclntab table
	// holding it rather than the whole section.
	sort.SliceStable(secs, func(i, j int) bool { return secs[i].end-secs[i].start < secs[j].end-secs[j].start })
	other := &secSum{name: "(headers, padding)"}
	secOf = func(off uint64) string {
		for _, s := range secs {
			if off >= s.start && off < s.end {
				return s.name
			}
		}
		return other.name
	}
	// Symbols, sorted by file offset, with their owner's name.
	type sym struct {
		off, size uint64
		owner     string
	}
	var syms []sym
	ss, _ := f.Symbols()
	for _, s := range ss {
		if s.Size == 0 || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS || s.Value < sec.Addr {
			continue
		}
		syms = append(syms, sym{off: sec.Offset + (s.Value - sec.Addr), size: s.Size, owner: owner(s.Name)})
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].off < syms[j].off })
	owners := map[string]int64{} // bytes of resident pages, split over the symbols in them
	for _, p := range pages {
		// A page counts for every range holding it (a pclntab table and
		// the section); the smallest names it below.
		var in *secSum
		for _, s := range secs {
			if p.off < s.end && p.off+pageSize > s.start {
				if in == nil {
					in = s
				}
				s.kB += 4
				if p.anon {
					s.anon += 4
				}
			}
		}
		if in == nil {
			in = other
			in.kB += 4
		}
		// Symbols overlapping this page, each credited the bytes it has in it.
		i := sort.Search(len(syms), func(i int) bool { return syms[i].off+syms[i].size > p.off })
		covered := uint64(0)
		for ; i < len(syms) && syms[i].off < p.off+pageSize; i++ {
			lo, hi := max(syms[i].off, p.off), min(syms[i].off+syms[i].size, p.off+pageSize)
			if hi > lo {
				key := syms[i].owner
				if bySection {
					key = strings.TrimSpace(in.name) + " " + key
				}
				owners[key] += int64(hi - lo)
				covered += hi - lo
			}
		}
		if covered < pageSize {
			owners["(no symbol: "+in.name+")"] += int64(pageSize - min(covered, pageSize))
		}
	}
	fmt.Printf("  %-24s %9s %9s %9s\n", "section", "size KiB", "res KiB", "private")
	byOff := append([]*secSum(nil), secs...)
	sort.SliceStable(byOff, func(i, j int) bool {
		if byOff[i].start != byOff[j].start {
			return byOff[i].start < byOff[j].start
		}
		return byOff[i].end > byOff[j].end
	})
	for _, s := range append(byOff, other) {
		if s.kB >= minK || s.kB > 0 && s.size > 1<<20 {
			fmt.Printf("  %-24s %9d %9d %9d\n", s.name, s.size/1024, s.kB, s.anon)
		}
	}
	type ow struct {
		name string
		b    int64
	}
	var ows []ow
	for n, b := range owners {
		ows = append(ows, ow{n, b})
	}
	sort.Slice(ows, func(i, j int) bool { return ows[i].b > ows[j].b })
	fmt.Printf("  resident by package/crate (KiB, top %d):\n", top)
	for i, o := range ows {
		if i >= top || o.b/1024 < minK/4 {
			break
		}
		fmt.Printf("  %9d  %s\n", o.b/1024, o.name)
	}
	return secOf, nil
}

func countAnon(pages []page) int {
	n := 0
	for _, p := range pages {
		if p.anon {
			n++
		}
	}
	return n
}

// owner names the package of a Go symbol or the crate of a Rust one.
func owner(name string) string {
	switch {
	case strings.HasPrefix(name, "_ZN"):
		// Itanium-mangled Rust/C++: _ZN<len><first path segment>...
		rest := name[3:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(rest[:j])
		if err != nil || j+n > len(rest) {
			return "rust/c++"
		}
		seg := rest[j : j+n]
		if strings.HasPrefix(seg, "_$LT$") {
			// An impl of a trait for a type: <Type as Trait>; name the type's crate.
			seg = strings.TrimPrefix(seg, "_$LT$")
			if k := strings.Index(seg, ".."); k > 0 {
				seg = seg[:k]
			}
		}
		return "rust:" + seg
	case strings.HasPrefix(name, "_R"):
		return "rust(v0)"
	case strings.HasPrefix(name, "go:string."), strings.HasPrefix(name, "go:"):
		if i := strings.IndexAny(name, ".*"); i > 0 {
			return name[:i]
		}
		return name
	case strings.HasPrefix(name, "type:"):
		return "type:*"
	}
	// Go: the package path is up to the first '.' after the last '/'.
	slash := strings.LastIndexByte(name, '/')
	if i := strings.IndexByte(name[slash+1:], '.'); i > 0 {
		return name[:slash+1+i]
	}
	if strings.Contains(name, ".") {
		return name
	}
	return "c:" + name
}
