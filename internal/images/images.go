// Package images is the one home of the context.images rules (spec 004):
// which bytes count as an image, the largest one accepted (max_bytes,
// refused too_large), how many one turn's tool calls may return between
// them (max_per_turn, refused turn_limit), and the one line an image is
// reduced to when it is not handed over as bytes (its media type, size
// and sha256).
package images

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"

	"github.com/murmur/mur/internal/manifest"
)

// Image is one image a tool attached to its result.
type Image struct {
	MediaType string // image/png, image/jpeg, image/gif or image/webp
	Data      []byte
}

// The reasons an attachment is refused, as the spec names them.
const (
	TooLarge  = "too_large"
	TurnLimit = "turn_limit"
)

// Limits are context.images resolved: the manifest's values or the
// spec's defaults.
type Limits struct {
	Keep       int
	MaxBytes   int64
	MaxPerTurn int
}

// Resolve reads context.images (nil when the manifest omits context: or
// images:), each absent key taking its default.
func Resolve(c *manifest.Images) (Limits, error) {
	l := Limits{Keep: manifest.DefaultImagesKeep, MaxPerTurn: manifest.DefaultImagesMaxPerTurn}
	size := manifest.DefaultImagesMaxBytes
	if c != nil {
		if c.Keep != nil {
			l.Keep = int(*c.Keep)
		}
		if c.MaxPerTurn != nil {
			l.MaxPerTurn = int(*c.MaxPerTurn)
		}
		if c.MaxBytes != "" {
			size = c.MaxBytes
		}
	}
	n, err := manifest.ParseByteSize(size)
	if err != nil {
		return Limits{}, fmt.Errorf("context.images.max_bytes: %w", err)
	}
	l.MaxBytes = n
	return l, nil
}

// sniffed are the image types a model reads, by the media type Go's
// content sniffing (the WHATWG algorithm) reports for their bytes.
var sniffed = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// MediaTypes are the image types Detect admits, sorted: what a door offers
// as input modes beside text.
func MediaTypes() []string {
	out := make([]string, 0, len(sniffed))
	for mt := range sniffed {
		out = append(out, mt)
	}
	sort.Strings(out)
	return out
}

// Detect reports whether a content part declared as mediaType is an
// image a model can read, and its media type: the declared type must be
// image/* and the bytes must sniff as that same type, so a mislabelled
// part is not handed to a model as an image.
func Detect(mediaType string, data []byte) (string, bool) {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil || !strings.HasPrefix(mt, "image/") {
		return "", false
	}
	got, _, _ := strings.Cut(http.DetectContentType(data), ";")
	if !sniffed[got] || got != mt {
		return "", false
	}
	return got, true
}

// Turn counts the images admitted in one model turn (under transport:
// process, in one tool call).
type Turn struct {
	limits Limits
	n      int
}

// NewTurn starts a count under l.
func NewTurn(l Limits) *Turn { return &Turn{limits: l} }

// Refusal is an attachment refused under context.images.
type Refusal struct {
	Reason string // TooLarge or TurnLimit
	Image  Image
	Limit  int64
}

func (r *Refusal) Error() string {
	switch r.Reason {
	case TooLarge:
		return fmt.Sprintf("%s refused %s: %d bytes is more than context.images.max_bytes (%d)", Describe(r.Image), TooLarge, len(r.Image.Data), r.Limit)
	default:
		return fmt.Sprintf("%s refused %s: this turn already returned context.images.max_per_turn (%d) images", Describe(r.Image), TurnLimit, r.Limit)
	}
}

// Admit counts img against the turn, or refuses it: too_large past
// max_bytes (whatever the count), turn_limit past max_per_turn. A
// refused image is not counted.
func (t *Turn) Admit(img Image) error {
	if int64(len(img.Data)) > t.limits.MaxBytes {
		return &Refusal{Reason: TooLarge, Image: img, Limit: t.limits.MaxBytes}
	}
	if t.n >= t.limits.MaxPerTurn {
		return &Refusal{Reason: TurnLimit, Image: img, Limit: int64(t.limits.MaxPerTurn)}
	}
	t.n++
	return nil
}

// Describe is the one line that stands for an image: its media type,
// size and sha256.
func Describe(img Image) string {
	sum := sha256.Sum256(img.Data)
	return fmt.Sprintf("[image %s, %d bytes, sha256 %s]", img.MediaType, len(img.Data), hex.EncodeToString(sum[:]))
}
