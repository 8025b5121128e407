package wasi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/wasm/cm"
)

// guestDir is where make guests put the Go- and JS-built components; the
// guest tests run only when it is set (make test-wasi-guests), since
// building them needs node and the guest toolchain.
func guestDir(t testing.TB) string {
	d := os.Getenv("MUR_GUEST_OUT")
	if d == "" {
		t.Skip("MUR_GUEST_OUT not set; run make test-wasi-guests")
	}
	return d
}

// guestCache is a compile cache for the guests, which take seconds each
// to compile. It is keyed by this test binary, so an artifact compiled by
// an earlier build of cm (other engine settings) is never loaded.
func guestCache(t testing.TB) string {
	exe, err := os.Executable()
	if err != nil {
		return t.TempDir()
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return t.TempDir()
	}
	key := fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint(exe, fi.Size(), fi.ModTime().UnixNano()))))
	return filepath.Join(os.TempDir(), "mur-wasi-guest-cache", key[:16])
}

type guest struct {
	inst *cm.Instance
	x    *Ctx
	run  *cm.Func
}

func loadGuest(t testing.TB, name string, pol Policy) *guest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(guestDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	e, err := cm.NewEngine(cm.Config{CacheDir: guestCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	comp, err := e.Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	l := e.NewLinker()
	if err := defineGuestLinker(l); err != nil {
		t.Fatal(err)
	}
	x, err := NewCtx(pol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	s, err := e.NewStore(cm.Limits{MemoryBytes: 256 << 20}, x)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	inst, err := l.Instantiate(context.Background(), s, comp)
	if err != nil {
		t.Fatal(err)
	}
	run, err := inst.Func("murmur:tool/run@0.1.0", "run")
	if err != nil {
		t.Fatal(err)
	}
	return &guest{inst: inst, x: x, run: run}
}

// defineGuestLinker defines WASI on l, plus the murmur interfaces the tool
// world also imports: other areas serve them and these guests never call
// them, so here they only refuse.
func defineGuestLinker(l *cm.Linker) error {
	if err := Define(l); err != nil {
		return err
	}
	for _, f := range []struct{ iface, fn string }{
		{"murmur:task/task@0.1.0", "request-input"},
		{"murmur:text/chunks@0.1.0", "emit"},
	} {
		l.Func([]string{f.iface}, f.fn, func(*cm.Caller, []cm.Val) (cm.Val, error) {
			return cm.Val{}, errors.New(f.iface + " is not served in wasi tests")
		})
	}
	return nil
}

// call runs the tool with input and returns its status and data.
func (g *guest) call(t testing.TB, input string) (status, data string) {
	t.Helper()
	in := cm.Record(
		cm.Field{Name: "data", Val: cm.Some(cm.String(input))},
		cm.Field{Name: "log-path", Val: cm.None()},
	)
	// A guest stuck in poll or a loop fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := g.run.Call(ctx, in)
	if err != nil {
		t.Fatalf("run %s: %v", input, err)
	}
	st, _ := v.Field("status")
	d, _ := v.Field("data")
	if d.IsSome() {
		p, _ := d.Payload()
		data = p.Str()
	}
	if sum, _ := v.Field("summary"); data == "" && sum.IsSome() {
		p, _ := sum.Payload()
		data = p.Str()
	}
	return st.Str(), data
}

func TestGuestGoFileToolUnderPolicy(t *testing.T) {
	wd := t.TempDir()
	proj := filepath.Join(wd, "proj")
	os.MkdirAll(filepath.Join(proj, "ro"), 0o755)
	os.WriteFile(filepath.Join(proj, "ro", "keep.txt"), []byte("kept"), 0o644)
	os.WriteFile(filepath.Join(wd, "outside.txt"), []byte("outside"), 0o644)
	os.Symlink("/etc", filepath.Join(proj, "etc-link"))
	os.Symlink("../outside.txt", filepath.Join(proj, "up-link"))
	var stdout, stderr bytes.Buffer
	g := loadGuest(t, "file-go.wasm", Policy{
		Workdir: wd, Scope: "proj", ReadOnly: []string{"proj/ro"},
		Stdout: &stdout, Stderr: &stderr,
	})

	tests := []struct {
		name, input, status, data string
	}{
		{"write in scope", `{"op":"write","path":"notes/a.txt","content":"hello"}`, "passed", ""},
		{"read back", `{"op":"read","path":"notes/a.txt"}`, "passed", "hello"},
		{"read read-only", `{"op":"read","path":"ro/keep.txt"}`, "passed", "kept"},
		{"write read-only", `{"op":"write","path":"ro/keep.txt","content":"x"}`, "failed", ""},
		{"symlink to /etc", `{"op":"read","path":"etc-link/passwd"}`, "failed", ""},
		{"symlink up", `{"op":"read","path":"up-link"}`, "failed", ""},
		{"list", `{"op":"list","path":"."}`, "passed", "notes/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, data := g.call(t, tt.input)
			if st != tt.status || !strings.Contains(data, tt.data) {
				t.Fatalf("got %s %q, want %s containing %q", st, data, tt.status, tt.data)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "notes", "a.txt")); string(b) != "hello" {
		t.Fatalf("written file holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "ro", "keep.txt")); string(b) != "kept" {
		t.Fatalf("read-only file changed to %q", b)
	}
}

func TestGuestGoProbeEnvArgsStdio(t *testing.T) {
	t.Setenv("HOST_SECRET", "must-not-leak")
	wd := t.TempDir()
	os.WriteFile(filepath.Join(wd, "in.txt"), []byte("inside"), 0o644)
	var stdout, stderr bytes.Buffer
	g := loadGuest(t, "wasi-probe-go.wasm", Policy{
		Workdir: wd,
		Env:     [][2]string{{"MURMUR_SESSION_ID", "ses_1"}, {"ALLOWED", "yes"}},
		Args:    []string{"probe", "--flag"},
		Stdout:  &stdout, Stderr: &stderr,
	})
	tests := []struct {
		name, input, status, data string
	}{
		{"allowed env", `{"op":"env","arg":"ALLOWED"}`, "passed", "yes"},
		{"host env hidden", `{"op":"env","arg":"HOST_SECRET"}`, "passed", "<unset>"},
		{"path hidden", `{"op":"env","arg":"PATH"}`, "passed", "<unset>"},
		{"whole environ", `{"op":"environ"}`, "passed", "MURMUR_SESSION_ID=ses_1\nALLOWED=yes"},
		{"args", `{"op":"args"}`, "passed", "probe --flag"},
		{"print", `{"op":"print","arg":"hello"}`, "passed", "printed"},
		{"relative read", `{"op":"read","arg":"in.txt"}`, "passed", "inside"},
		{"absolute read stays in scope", `{"op":"read","arg":"/etc/passwd"}`, "failed", ""},
		{"dotdot read stays in scope", `{"op":"read","arg":"../../../../etc/passwd"}`, "failed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, data := g.call(t, tt.input)
			if st != tt.status || !strings.Contains(data, tt.data) || strings.Contains(data, "root:") {
				t.Fatalf("got %s %q, want %s containing %q", st, data, tt.status, tt.data)
			}
		})
	}
	if stdout.String() != "hello" || stderr.String() != "err:hello" {
		t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
}

func TestGuestJSEchoInstantiates(t *testing.T) {
	g := loadGuest(t, "echo-js.wasm", Policy{})
	st, data := g.call(t, "hello from js")
	if st != "passed" || data != "hello from js" {
		t.Fatalf("got %s %q", st, data)
	}
}

func TestGuestJSFetchGoverned(t *testing.T) {
	h := http.NewServeMux()
	h.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi "+r.Proto) })
	h.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/hello", http.StatusFound) })
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	host := strings.TrimPrefix(srv.URL, "https://")
	port := host[strings.LastIndex(host, ":")+1:]
	a, _ := ParseAllow([]string{srv.URL})
	g := loadGuest(t, "wasi-probe-js.wasm", Policy{Network: a, TLSRoots: roots})

	tests := []struct {
		name, url, status, data string
	}{
		{"allowed https", srv.URL + "/hello", "passed", "200 - hi HTTP/2.0"},
		{"redirect returned", srv.URL + "/moved", "passed", "302 /hello"},
		{"other name same port", "https://localhost:" + port + "/hello", "failed", ""},
		{"plain http same host", "http://" + host + "/hello", "failed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, data := g.call(t, tt.url)
			if st != tt.status || !strings.Contains(data, tt.data) {
				t.Fatalf("got %s %q, want %s containing %q", st, data, tt.status, tt.data)
			}
		})
	}
}

// TestGuestGoStreamsAnyBytes: a Go guest (preview1 adapter) reads text and
// binary files and HTTP bodies of odd sizes, through odd-sized buffers,
// and sees exactly the bytes the host has; the streams byte fast path must
// not change a byte, trap on non-ASCII data or misplace a read.
func TestGuestGoStreamsAnyBytes(t *testing.T) {
	wd := t.TempDir()
	bodies := map[string][]byte{}
	for _, n := range []int{1, 5, 4097, 70001, 300001} {
		for _, kind := range []string{"text", "binary"} {
			name := fmt.Sprintf("%s%d", kind, n)
			bodies[name] = streamPayload(kind, n)
			if err := os.WriteFile(filepath.Join(wd, name), bodies[name], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	bodies["utf8"] = []byte(strings.Repeat("naïve café — 東京 ", 999))
	os.WriteFile(filepath.Join(wd, "utf8"), bodies["utf8"], 0o644)
	url, a := bodyServer(t, bodies)
	g := loadGuest(t, "wasi-probe-go.wasm", Policy{Workdir: wd, Network: a})
	for name, body := range bodies {
		want := fmt.Sprintf("%x", sha256.Sum256(body))
		for _, src := range []string{name, url + name} {
			t.Run(src, func(t *testing.T) {
				st, data := g.call(t, `{"op":"hash","arg":"`+src+`"}`)
				if st != "passed" || data != want {
					t.Fatalf("guest hashed %s: %s %q, want %s", src, st, data, want)
				}
			})
		}
	}
}

// TestGuestJSStreamsAnyBytes: a JS guest (componentize-js, whose allocator
// takes the streams fast path for reads) receives text, binary and UTF-8
// HTTP bodies byte for byte.
func TestGuestJSStreamsAnyBytes(t *testing.T) {
	bodies := map[string][]byte{
		"text":   streamPayload("text", 100001),
		"binary": streamPayload("binary", 100001),
		"one":    {0xff},
		"utf8":   []byte(strings.Repeat("naïve café — 東京 ", 999)),
	}
	url, a := bodyServer(t, bodies)
	g := loadGuest(t, "wasi-probe-js.wasm", Policy{Network: a})
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			h := fnv.New32a()
			h.Write(body)
			want := fmt.Sprintf("%d %d", len(body), h.Sum32())
			st, data := g.call(t, "fnv:"+url+name)
			if st != "passed" || data != want {
				t.Fatalf("guest read %s: %s %q, want %s", name, st, data, want)
			}
		})
	}
}

// bodyServer serves bodies[name] at /name on loopback until the test ends,
// and returns its base URL (ending in /) and an allow-list admitting it.
func bodyServer(t testing.TB, bodies map[string][]byte) (string, *Allow) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bodies[strings.TrimPrefix(r.URL.Path, "/")])
	}))
	t.Cleanup(srv.Close)
	a, err := ParseAllow([]string{strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL + "/", a
}
