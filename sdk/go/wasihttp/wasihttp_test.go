package wasihttp

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestMethodCase(t *testing.T) {
	tests := []struct {
		in    string
		disc  uint32
		other string
	}{
		{"", 0, ""},
		{"GET", 0, ""},
		{"POST", 2, ""},
		{"PATCH", 8, ""},
		{"PROPFIND", methodOther, "PROPFIND"},
	}
	for _, tt := range tests {
		d, o := methodCase(tt.in)
		if d != tt.disc || o != tt.other {
			t.Errorf("methodCase(%q) = (%d, %q), want (%d, %q)", tt.in, d, o, tt.disc, tt.other)
		}
	}
}

func TestSchemeCase(t *testing.T) {
	for in, want := range map[string]uint32{"http": schemeHTTP, "HTTPS": schemeHTTPS, "ws": schemeOther} {
		if d, _ := schemeCase(in); d != want {
			t.Errorf("schemeCase(%q) = %d, want %d", in, d, want)
		}
	}
}

func TestFieldList(t *testing.T) {
	tests := []struct {
		name   string
		header Header
		body   io.Reader
		want   [][2]string
	}{
		{"order kept, names lower-case, hop-by-hop dropped",
			Header{{"X-Multi", "b"}, {"Content-Type", "application/json"}, {"Connection", "close"}, {"x-multi", "a"}, {"Host", "evil.example"}, {"TE", "trailers"}}, nil,
			[][2]string{{"x-multi", "b"}, {"content-type", "application/json"}, {"x-multi", "a"}}},
		{"length of a sized body", Header{{"accept", "*/*"}}, strings.NewReader("hello"),
			[][2]string{{"accept", "*/*"}, {"content-length", "5"}}},
		{"the caller's length wins", Header{{"Content-Length", "5"}}, bytes.NewReader([]byte("hello")),
			[][2]string{{"content-length", "5"}}},
		{"no length for an empty or unsized body", nil, io.MultiReader(strings.NewReader("x")), [][2]string{}},
		{"empty sized body", nil, strings.NewReader(""), [][2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldList(tt.header, tt.body); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fieldList = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHeaderGet(t *testing.T) {
	h := Header{{"content-type", "text/event-stream"}, {"Retry-After", "2"}, {"retry-after", "3"}}
	for name, want := range map[string]string{"Content-Type": "text/event-stream", "retry-after": "2", "x": ""} {
		if got := h.Get(name); got != want {
			t.Errorf("Get(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestStatusLine holds the guest's status lines to what net/http gives
// on the host, so a driver's messages read the same in both.
func TestStatusLine(t *testing.T) {
	for code := 100; code < 600; code++ {
		if got, want := statusLine(code), strconv.Itoa(code)+" "+http.StatusText(code); got != want {
			t.Errorf("statusLine(%d) = %q, want %q", code, got, want)
		}
	}
}

func TestCodeError(t *testing.T) {
	err := codeError("handle", 15)
	if !errors.Is(err, ErrRequest) || !strings.Contains(err.Error(), "HTTP-request-denied") {
		t.Errorf("codeError(15) = %v", err)
	}
	if len(errorCodes) != 39 {
		t.Errorf("%d error codes, wasi:http 0.2 has 39", len(errorCodes))
	}
	if err := codeError("get", 200); !strings.Contains(err.Error(), "error-code(200)") {
		t.Errorf("unknown code = %v", err)
	}
}

func TestSplitURL(t *testing.T) {
	for _, raw := range []string{
		"http://127.0.0.1:9/v1/messages",
		"http://127.0.0.1:9",
		"https://api.openai.com/v1/chat/completions?x=1&y=%20z",
		"http://user:pw@host:8080/p#frag",
		"http://[::1]:9/a?b#c",
		"HTTP://Host/Path",
		"http://h?q=1",
	} {
		scheme, authority, pathQuery, err := splitURL(raw)
		if err != nil {
			t.Errorf("splitURL(%q): %v", raw, err)
			continue
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.EqualFold(scheme, u.Scheme) || authority != u.Host || pathQuery != u.RequestURI() {
			t.Errorf("splitURL(%q) = %q %q %q, net/url says %q %q %q", raw, scheme, authority, pathQuery, u.Scheme, u.Host, u.RequestURI())
		}
	}
	for _, raw := range []string{"", "/v1/messages", "127.0.0.1:9/x", "://h/", "http:///path", "http://user@/", "http://h/a b", "http://h/\n"} {
		if _, _, _, err := splitURL(raw); !errors.Is(err, ErrRequest) {
			t.Errorf("splitURL(%q) = %v, want ErrRequest", raw, err)
		}
	}
}

func FuzzSplitURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:9/v1", "https://u@h?x#y", "http://h#", "x://", "http://@/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		scheme, authority, pathQuery, err := splitURL(raw)
		if err != nil {
			return
		}
		if scheme == "" || authority == "" || !strings.HasPrefix(pathQuery, "/") ||
			strings.ContainsAny(authority, "/?#@") || strings.Contains(pathQuery, "#") {
			t.Fatalf("splitURL(%q) = %q %q %q", raw, scheme, authority, pathQuery)
		}
	})
}
