package wasihttp

import (
	"errors"
	"net/http"
	"reflect"
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

func TestHeaderList(t *testing.T) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Add("X-Multi", "a")
	h.Add("X-Multi", "b")
	h.Set("Connection", "close")
	h.Set("Host", "evil.example")
	want := [][2]string{{"content-type", "application/json"}, {"x-multi", "a"}, {"x-multi", "b"}}
	if got := headerList(h); !reflect.DeepEqual(got, want) {
		t.Errorf("headerList = %v, want %v", got, want)
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
