package tokens

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// fourKiB repeats src up to 4 KiB, cut at a rune boundary.
func fourKiB(src string) string {
	s := strings.Repeat(src, 4096/len(src)+1)[:4096]
	return strings.ToValidUTF8(s, "")
}

var benchTexts = []struct{ name, text string }{
	{"english", fourKiB("The runtime counts tokens offline so that a spend ceiling can refuse a call before it is made. " +
		"It wasn't always so: the first versions asked the provider, which cost a round trip for every turn. ")},
	{"code", fourKiB("func (l *Loop) admit(ctx context.Context, req *Request) error {\n" +
		"\tif l.ceiling > 0 && l.spent+int64(tokens.Count(req.Text)) > l.ceiling {\n" +
		"\t\treturn fmt.Errorf(\"spend ceiling %d reached: %w\", l.ceiling, ErrCeiling)\n\t}\n\treturn nil\n}\n\n")},
}

// BenchmarkCount compares Count with tiktoken-go on the same 4 KiB texts.
func BenchmarkCount(b *testing.B) {
	ref := reference(b)
	for _, bt := range benchTexts {
		b.Run(bt.name+"/mur", func(b *testing.B) {
			b.SetBytes(int64(len(bt.text)))
			b.ReportAllocs()
			for b.Loop() {
				Count(bt.text)
			}
		})
		b.Run(bt.name+"/tiktoken-go", func(b *testing.B) {
			b.SetBytes(int64(len(bt.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ref.Count(bt.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// firstCallEnv makes the test binary, run as a child, time its first count
// in a fresh process and print it in nanoseconds. The value names the
// tokenizer: "mur" or "tiktoken-go".
const firstCallEnv = "MUR_TOKENS_FIRST_CALL"

func TestMain(m *testing.M) {
	if which := os.Getenv(firstCallEnv); which != "" {
		os.Exit(firstCall(which))
	}
	os.Exit(m.Run())
}

// firstCall counts one sentence in this fresh process and prints how long
// that took, load included, and the bytes the process has allocated by
// then (package initialisation included).
func firstCall(which string) int {
	text := benchTexts[0].text[:200]
	start := time.Now()
	switch which {
	case "mur":
		Count(text)
	case "tiktoken-go":
		c, err := tokenizer.Get(tokenizer.O200kBase)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := c.Count(text); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown tokenizer %q\n", which)
		return 2
	}
	d := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println(d.Nanoseconds(), ms.TotalAlloc)
	return 0
}

// freshFirstCall runs the test binary as a child that times its first
// count, and returns that time and the bytes the child had allocated.
func freshFirstCall(tb testing.TB, which string) (time.Duration, uint64) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), firstCallEnv+"="+which)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("child: %v", err)
	}
	var ns int64
	var alloc uint64
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &ns, &alloc); err != nil {
		tb.Fatalf("child said %q: %v", out, err)
	}
	return time.Duration(ns), alloc
}

// TestFirstCallLoadsNothing guards the point of the embedded table: the
// first count in a process decodes no vocabulary. What a load costs is
// memory before it is time, so the check is on bytes allocated by the whole
// process up to its first count, which a loaded machine does not change
// (the first-call latency is BenchmarkFirstCall's first-ns).
func TestFirstCallLoadsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	_, mur := freshFirstCall(t, "mur")
	_, ref := freshFirstCall(t, "tiktoken-go")
	t.Logf("allocated by the first count's process: mur %d B, tiktoken-go %d B", mur, ref)
	if ref <= firstCallAllocCeiling {
		t.Errorf("tiktoken-go's first count allocated only %d B: the measure no longer sees a vocabulary load", ref)
	}
	if mur > firstCallAllocCeiling {
		t.Errorf("the first count's process allocated %d B; the embedded table needs no load (ceiling %d B)", mur, firstCallAllocCeiling)
	}
}

// firstCallAllocCeiling is well below what a decoded vocabulary takes
// (tiktoken-go's first count: about 7 MB here) and well above this
// process's own (about 160 kB here).
const firstCallAllocCeiling = 1 << 20

// BenchmarkFirstCall reports the first count's latency in a fresh process
// (first-ns), for Count and for tiktoken-go.
func BenchmarkFirstCall(b *testing.B) {
	for _, which := range []string{"mur", "tiktoken-go"} {
		b.Run(which, func(b *testing.B) {
			var total time.Duration
			n := 0
			for b.Loop() {
				d, _ := freshFirstCall(b, which)
				total += d
				n++
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(n), "first-ns")
		})
	}
}
