package images

import (
	"errors"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/manifest"
)

var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func TestResolve(t *testing.T) {
	l, err := Resolve(nil)
	if err != nil || l != (Limits{Keep: 5, MaxBytes: 5 << 20, MaxPerTurn: 5}) {
		t.Fatalf("defaults %+v %v", l, err)
	}
	two := int64(2)
	l, err = Resolve(&manifest.Images{Keep: &two, MaxBytes: "64Ki", MaxPerTurn: &two})
	if err != nil || l != (Limits{Keep: 2, MaxBytes: 64 << 10, MaxPerTurn: 2}) {
		t.Fatalf("declared %+v %v", l, err)
	}
	if _, err := Resolve(&manifest.Images{MaxBytes: "10MB"}); err == nil {
		t.Fatal("10MB accepted")
	}
}

func TestDetect(t *testing.T) {
	for _, tt := range []struct {
		name, mt string
		data     []byte
		want     string
	}{
		{"png", "image/png", png, "image/png"},
		{"png with a parameter", "image/png; name=a.png", png, "image/png"},
		{"jpeg", "image/jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF"), "image/jpeg"},
		{"gif", "image/gif", []byte("GIF89a\x01\x00"), "image/gif"},
		{"mislabelled", "image/jpeg", png, ""},
		{"not an image", "image/png", []byte("hello"), ""},
		{"text type", "text/plain", png, ""},
		{"svg", "image/svg+xml", []byte("<svg/>"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Detect(tt.mt, tt.data)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("Detect = %q %v, want %q", got, ok, tt.want)
			}
		})
	}
}

func TestTurnAdmit(t *testing.T) {
	turn := NewTurn(Limits{Keep: 5, MaxBytes: 16, MaxPerTurn: 2})
	small := Image{MediaType: "image/png", Data: png}
	big := Image{MediaType: "image/png", Data: append(append([]byte{}, png...), make([]byte, 8)...)}
	var r *Refusal
	if err := turn.Admit(big); !errors.As(err, &r) || r.Reason != TooLarge || !strings.Contains(err.Error(), "refused too_large: 24 bytes is more than context.images.max_bytes (16)") {
		t.Fatalf("big: %v", err)
	}
	for i := range 2 {
		if err := turn.Admit(small); err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
	}
	if err := turn.Admit(small); !errors.As(err, &r) || r.Reason != TurnLimit || !strings.Contains(err.Error(), "refused turn_limit") {
		t.Fatalf("third: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	got := Describe(Image{MediaType: "image/png", Data: []byte("abc")})
	if got != "[image image/png, 3 bytes, sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad]" {
		t.Fatal(got)
	}
}

// FuzzDetect: whatever type and bytes a tool sends, an accepted image is
// one of the sniffed types, its declared type names that same type, and
// Describe renders it.
func FuzzDetect(f *testing.F) {
	f.Add("image/png", png)
	f.Add("image/jpeg; q=1", []byte("\xff\xd8\xff"))
	f.Add("IMAGE/PNG", png)
	f.Add("image/", []byte{})
	f.Fuzz(func(t *testing.T, mt string, data []byte) {
		got, ok := Detect(mt, data)
		if !ok {
			if got != "" {
				t.Fatalf("refused with type %q", got)
			}
			return
		}
		if !sniffed[got] {
			t.Fatalf("accepted %q", got)
		}
		if !strings.HasPrefix(Describe(Image{MediaType: got, Data: data}), "[image "+got+", ") {
			t.Fatal("Describe")
		}
	})
}
