package door

import (
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/murmur/mur/internal/images"
)

// messageImages reads the images a message carries — its raw parts
// declared image/* whose bytes are that image type (images.Detect) —
// under context.images: a message with an image over max_bytes, or with
// more than max_per_turn images, is refused whole with -32602
// (a2a.ErrInvalidParams), naming the part and the limit. Other parts are
// not images and are left as they were.
func messageImages(m *a2a.Message, l images.Limits, textOnly string) ([]images.Image, error) {
	if m == nil {
		return nil, nil
	}
	var out []images.Image
	turn := images.NewTurn(l)
	for i, p := range m.Parts {
		if p == nil {
			continue
		}
		raw := p.Raw()
		if raw == nil {
			continue
		}
		mt, ok := images.Detect(p.MediaType, raw)
		if !ok {
			continue
		}
		if textOnly != "" {
			return nil, fmt.Errorf("message part %d: an image (%s), but %s; send the task as text: %w", i, mt, textOnly, a2a.ErrInvalidParams)
		}
		img := images.Image{MediaType: mt, Data: raw}
		if err := turn.Admit(img); err != nil {
			what := "context.images.max_per_turn"
			if r, ok := err.(*images.Refusal); ok && r.Reason == images.TooLarge {
				return nil, fmt.Errorf("message part %d: image of %d bytes is larger than context.images.max_bytes (%d); send a smaller image: %w",
					i, len(raw), l.MaxBytes, a2a.ErrInvalidParams)
			}
			return nil, fmt.Errorf("message part %d: the message carries more than %s (%d) images; send at most %d: %w",
				i, what, l.MaxPerTurn, l.MaxPerTurn, a2a.ErrInvalidParams)
		}
		out = append(out, img)
	}
	return out, nil
}

// base64Len is the length of n bytes base64-encoded, as a JSON-RPC body
// carries a raw part.
func base64Len(n int64) int64 { return (n + 2) / 3 * 4 }
