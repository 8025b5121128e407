package tokens

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
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
// that took, load included.
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
	fmt.Println(time.Since(start).Nanoseconds())
	return 0
}

// freshFirstCall runs the test binary as a child that times its first
// count.
func freshFirstCall(tb testing.TB, which string) time.Duration {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), firstCallEnv+"="+which)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("child: %v", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		tb.Fatalf("child said %q: %v", out, err)
	}
	return time.Duration(ns)
}

// TestFirstCallIsFast guards the point of the embedded table: the first
// count in a process does no loading. tiktoken-go took ~130 ms here; the
// bound is loose so a loaded machine does not fail it.
func TestFirstCallIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	best := time.Hour
	for range 3 {
		best = min(best, freshFirstCall(t, "mur"))
	}
	t.Logf("first Count in a fresh process: %v (best of 3)", best)
	if best > 20*time.Millisecond {
		t.Errorf("first Count took %v in a fresh process; the table needs no load, want well under 20ms", best)
	}
}

// BenchmarkFirstCall reports the first count's latency in a fresh process
// (first-ns), for Count and for tiktoken-go.
func BenchmarkFirstCall(b *testing.B) {
	for _, which := range []string{"mur", "tiktoken-go"} {
		b.Run(which, func(b *testing.B) {
			var total time.Duration
			n := 0
			for b.Loop() {
				total += freshFirstCall(b, which)
				n++
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(n), "first-ns")
		})
	}
}
