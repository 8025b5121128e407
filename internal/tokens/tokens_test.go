package tokens

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"

	"github.com/murmur/mur/internal/tokens/vocab"
)

// reference is tiktoken-go's o200k_base, the counts Count must reproduce.
func reference(tb testing.TB) tokenizer.Codec {
	tb.Helper()
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		tb.Fatalf("tiktoken-go o200k_base: %v", err)
	}
	return c
}

func refCount(tb testing.TB, c tokenizer.Codec, s string) int {
	tb.Helper()
	n, err := c.Count(s)
	if err != nil {
		tb.Fatalf("tiktoken-go Count(%q): %v", s, err)
	}
	return n
}

// corpus exercises every branch of the pre-tokenizer and both merge paths.
var corpus = []struct{ name, text string }{
	{"empty", ""},
	{"word", "hello"},
	{"english", "The quick brown fox jumps over the lazy dog. It wasn't a fox, though; it was a cat!"},
	{"capitals", "HTTPServer XMLHttpRequest iPhone McDonald ALLCAPS Title Case camelCaseWord snake_case_word"},
	{"contractions", "I'm you're we've they'll she'd it's don't I'M YOU'RE WE'VE THEY'LL SHE'D IT'S DON'T"},
	{"contractions mixed case", "I'M you'Re we'vE they'Ll she'D it'S don'T x'll y'LL z'lL"},
	{"contraction lookalikes", "rock'n'roll o'clock 'tis ' s 'll' 'xyz' ’s ‘quoted’ l'homme"},
	{"long s contraction", "it'ſ Iſ'ſ 'ſ"},
	{"apostrophe after capitals", "NASA's FBI'S USA'll ABC'd"},
	{"digits", "1 12 123 1234 12345 123456 1234567 3.14159 1,000,000 2026-11-29 0x1F 1e10 ٣٤٥٦ ²³ ⅓ Ⅻ"},
	{"digits and letters", "abc123def 123abc A1B2C3 v1.2.3 h264 mp3"},
	{"whitespace runs", "a  b   c    d\t\te\t \t f \n g\n\n\nh \n \n i    \n\n   j"},
	{"crlf", "line one\r\nline two\r\n\r\nline four\r\n"},
	{"cr alone", "a\rb\r\rc \r d\r"},
	{"trailing spaces", "text with trailing spaces   "},
	{"trailing newline spaces", "text\n   "},
	{"leading spaces", "   leading"},
	{"only spaces", "        "},
	{"only newlines", "\n\n\n\n"},
	{"unicode spaces", "a\u00a0b\u2003c\u3000d\u2028e\u2029f\u0085g\u1680h\u202fi\u205fj \u00a0 k"},
	{"vertical tab and form feed", "a\vb\fc\v\fd \v e"},
	{"code", "func main() {\n\tfmt.Println(\"hi\")\n\tfor i := 0; i < 10; i++ {\n\t\tx[i] = i*i // square\n\t}\n}\n"},
	{"json", `{"name":"mur","version":"1.2.3","tags":["a","b"],"nested":{"k":null,"n":-12.5e3,"ok":true}}`},
	{"paths and urls", "/usr/local/bin/mur https://example.com/a/b?c=d&e=f#g C:\\Windows\\System32 ../../x//y///"},
	{"punctuation runs", "!!! ??? ... --- === +++ *** ### @@@ $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}} <<< >>> ||| ~~~ ``` \"\"\" ''' ;;; :::"},
	{"punct then newline", "end.\n\nnext;\r\n// comment\n/* block */\n"},
	{"slashes and newlines", "a/\n/b /\r\n/ //\n\n"},
	{"cjk", "日本語のテキストを数えます。中文文本也需要计数。한국어 텍스트도 있습니다."},
	{"cjk mixed", "東京2026年11月29日、Goで書かれたmurが動く。"},
	{"emoji", "👍 🎉🎉 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇫🇷 a👍b 😀😃😄😁"},
	{"combining marks", "e\u0301 cafe\u0301 n\u0303o\u0308 \u0301\u0301\u0301 \u0301abc A\u0301BC x\u20dd"},
	{"leading mark", "\u0301hello"},
	{"marks after punctuation", "!\u0301a ?\u0301\u0301B .\u0300\u0300"},
	{"arabic", "مرحبا بالعالم، هذا نص عربي للاختبار ١٢٣."},
	{"hebrew", "שלום עולם, זהו טקסט בעברית."},
	{"devanagari", "नमस्ते दुनिया, यह हिंदी पाठ है।"},
	{"thai", "สวัสดีชาวโลก นี่คือข้อความภาษาไทย"},
	{"cyrillic greek", "Привет, мир! Γειά σου Κόσμε! ΑΒΓ αβγ ПРИВЕТ"},
	{"titlecase and modifiers", "ǅungla ǈudi ǋ ʰʲʷ ˈstress ʼokina ᵃᵇᶜ Aʰ ʰA"},
	{"modifier then upper", "ʰA ʰAB xʰAy"},
	{"upper then marks", "AB\u0301 AB\u0301C A\u0301\u0302 ABC\u0301 d"},
	{"math and symbols", "∑ x² ≤ ∞ → ∀ε>0 ∃δ ± × ÷ © ® ™ € £ ¥ § ¶ •"},
	{"symbols after space", " → ∞  ≤"},
	{"del", "a\x7fb ab\x7fcd \x7f\x7f!\x7f! x\x7f \x7f1 1\x7f2 \x7f\n"},
	{"newlines after spaces", "h \n \n i\n \n\n \r\n  \n x  \r \n"},
	{"controls", "a\x00b\x01c\x1bd\x7f e\x1c\x1d\x1e\x1f f"},
	{"private use and unassigned", "\ue000\uf8ff \U000F0000 \u0378"},
	{"replacement char", "\ufffd\ufffd a\ufffdb"},
	{"long word", strings.Repeat("supercalifragilisticexpialidocious", 5)},
	{"long spaces", strings.Repeat(" ", 300) + "x" + strings.Repeat(" ", 300)},
	{"long digits", strings.Repeat("9876543210", 20)},
	{"long punct", strings.Repeat("=-", 150) + "\n"},
	{"base64", "aGVsbG8gd29ybGQgdGhpcyBpcyBhIGxvbmcgYmFzZTY0IHN0cmluZyB0aGF0IGdvZXMgb24gYW5kIG9uIGFuZCBvbiBhbmQgb24gYW5kIG9u"},
	{"hex", "0123456789abcdef0123456789ABCDEFdeadbeefcafebabe" + strings.Repeat("f00d", 40)},
	{"long cjk", strings.Repeat("漢字仮名交じり文", 20)},
	{"long emoji", strings.Repeat("😀", 60)},
	{"markdown", "# Title\n\n- item *one*\n- item **two**\n\n```go\nx := 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"},
	{"html", "<div class=\"x\"><p>Hello&nbsp;world</p><br/></div>"},
	{"special token text", "<|endoftext|> <|endofprompt|>"},
}

func TestCountMatchesTiktoken(t *testing.T) {
	ref := reference(t)
	for _, tc := range corpus {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := Count(tc.text), refCount(t, ref, tc.text); got != want {
				t.Errorf("Count(%q) = %d, tiktoken-go says %d", tc.text, got, want)
			}
			if got, want := CountBytes([]byte(tc.text)), Count(tc.text); got != want {
				t.Errorf("CountBytes = %d, Count = %d", got, want)
			}
		})
	}
}

// TestCountFiles compares counts on real prose and code: this package's
// sources and the repository's docs.
func TestCountFiles(t *testing.T) {
	ref := reference(t)
	var files []string
	for _, pattern := range []string{"*.go", "vocab/*.go", "gen/*.go", "../../docs/*.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 4 {
		t.Fatalf("found only %d files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := Count(string(b)), refCount(t, ref, string(b)); got != want {
			t.Errorf("%s: Count = %d, tiktoken-go says %d", f, got, want)
		}
	}
}

// TestCountEveryRune puts each rune of the BMP, and each of a sample from
// the other planes, in contexts that reach every pre-tokenizer branch, so
// that the scanner's classes agree with the reference's for all of them.
func TestCountEveryRune(t *testing.T) {
	if testing.Short() {
		t.Skip("a million comparisons")
	}
	ref := reference(t)
	var b strings.Builder
	check := func(lo, hi, step rune) {
		for r := lo; r <= hi; r += step {
			if !utf8.ValidRune(r) {
				continue
			}
			c := string(r)
			// One string per rune; the contexts are joined by text that
			// starts a fresh piece either way.
			b.Reset()
			for _, ctx := range []string{"a" + c + "b", " " + c + c, "A" + c + "'S", c + "1", "! " + c, "\n" + c + " x", c + " \n"} {
				b.WriteString(ctx)
				b.WriteString("\n\n")
			}
			if got, want := Count(b.String()), refCount(t, ref, b.String()); got != want {
				t.Errorf("rune %U: Count(%q) = %d, tiktoken-go says %d", r, b.String(), got, want)
			}
		}
	}
	check(0, 0xFFFF, 1)
	check(0x10000, 0x10FFFF, 61)
	check(0x1F300, 0x1FAFF, 1) // emoji
	check(0x1D400, 0x1D7FF, 1) // mathematical letters and digits
}

func TestCountInvalidUTF8(t *testing.T) {
	ref := reference(t)
	for _, s := range []string{"\xff", "a\xffb", "\xc3", "caf\xc3", "\xe6\x97", " \xf0\x9f\x98 x", "\xed\xa0\x80", "\xc0\xaf", "ok\xffok\xfe\xfd  \xff\n"} {
		if got, want := Count(s), refCount(t, ref, s); got != want {
			t.Errorf("Count(%q) = %d, tiktoken-go says %d", s, got, want)
		}
	}
}

func TestCountBytesInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want int
	}{
		{"five bad bytes", []byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb}, 2},
		{"one bad byte", []byte{0xff}, 1},
		{"text with a bad byte", []byte("hello\xffworld"), 3},
		{"truncated rune", []byte("caf\xc3"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CountBytes(tt.in); got != tt.want {
				t.Errorf("CountBytes(%q) = %d, want %d (one per four bytes)", tt.in, got, tt.want)
			}
		})
	}
}

func TestFallback(t *testing.T) {
	saved, savedErr := o200k, errO200k
	t.Cleanup(func() { o200k, errO200k = saved, savedErr })
	o200k, errO200k = vocab.Open("not a table")
	if errO200k == nil {
		t.Fatal("Open accepted a non-table")
	}
	for _, tt := range []struct {
		in   string
		want int
	}{{"", 0}, {"a", 1}, {"hello", 2}, {"hello world!", 3}} {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("fallback Count(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestTable checks the embedded table: header, checksum, and that it holds
// exactly tiktoken-go's o200k_base ranks.
func TestTable(t *testing.T) {
	if errO200k != nil {
		t.Fatalf("embedded table: %v", errO200k)
	}
	if err := vocab.Verify(o200kBin); err != nil {
		t.Fatalf("embedded table: %v (regenerate with go generate ./internal/tokens)", err)
	}
	ref := reference(t)
	held := 0
	for r := range o200k.Len() {
		tok := o200k.Token(r)
		want, err := ref.Decode([]uint{uint(r)})
		if err != nil {
			want = ""
		}
		if tok != want {
			t.Fatalf("rank %d is %q, tiktoken-go has %q", r, tok, want)
		}
		if tok == "" {
			continue
		}
		held++
		if got, ok := o200k.Rank(tok); !ok || got != r {
			t.Fatalf("Rank(%q) = %d, %v; want %d", tok, got, ok, r)
		}
	}
	if held < 199_000 {
		t.Errorf("table holds %d tokens, o200k_base has about 200k", held)
	}
	for _, s := range []string{"", "not-a-token-at-all", "<|endoftext|>", strings.Repeat("x", 300)} {
		if r, ok := o200k.Rank(s); ok {
			t.Errorf("Rank(%q) = %d, want absent", s, r)
		}
	}
}

// TestGeneratedTableIsCurrent regenerates the table and compares it with
// the embedded one byte for byte, so a change to the generator or the
// format that was not followed by go generate fails here.
func TestGeneratedTableIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "o200k.bin")
	if msg, err := exec.Command(gobin, "run", "./gen", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != o200kBin {
		t.Errorf("o200k.bin differs from what ./gen writes (%d vs %d bytes): run go generate ./internal/tokens", len(o200kBin), len(b))
	}
}

func FuzzCount(f *testing.F) {
	for _, tc := range corpus {
		f.Add(tc.text)
	}
	f.Add("\xff\xfe a\xc3")
	ref := reference(f)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Count(s), refCount(t, ref, s); got != want {
			t.Errorf("Count(%q) = %d, tiktoken-go says %d", s, got, want)
		}
	})
}

// TestNoReferenceInBuild keeps tiktoken-go (a 200k-entry map literal and a
// regexp engine) out of every binary that counts tokens: only the tests
// and the generator may import it.
func TestNoReferenceInBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "tiktoken") || strings.Contains(dep, "regexp2") {
			t.Errorf("package tokens depends on %s", dep)
		}
	}
}
