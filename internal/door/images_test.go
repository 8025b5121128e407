package door

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/murmur/mur/internal/images"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// imageSend is a SendMessage whose message carries a text part and the
// given raw parts, each with its media type.
func imageSend(parts ...[2]string) string {
	ps := []map[string]any{{"text": "describe these"}}
	for _, p := range parts {
		ps = append(ps, map[string]any{"raw": base64.StdEncoding.EncodeToString([]byte(p[1])), "mediaType": p[0]})
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
		"params": map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": ps}}})
	return string(b)
}

// TestMessageImages: an A2A message's image parts reach the backend as
// images; one over context.images.max_bytes, or one past max_per_turn,
// refuses the message with -32602 and the spec's limit named, and no task
// is run; a part that is not an image of its declared type is not one.
func TestMessageImages(t *testing.T) {
	f := open(t, queueSleep, func(c *Config) {
		c.Images = images.Limits{Keep: 5, MaxBytes: 32, MaxPerTurn: 2}
	})
	png := string(pngBytes)
	for _, tc := range []struct {
		name  string
		parts [][2]string
		want  string
	}{
		{"too large", [][2]string{{"image/png", png + strings.Repeat("x", 32)}}, "image of 48 bytes is larger than context.images.max_bytes (32)"},
		{"too many", [][2]string{{"image/png", png}, {"image/png", png}, {"image/png", png}}, "more than context.images.max_per_turn (2) images"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, env, raw := post(t, f.door, imageSend(tc.parts...), nil)
			if status != 200 || code(env) != codeInvalidParams || !strings.Contains(string(raw), tc.want) {
				t.Fatalf("status %d code %d: %s", status, code(env), raw)
			}
		})
	}
	if n := f.backend.count(RecordTaskReceived); n != 0 {
		t.Fatalf("%d refused messages became tasks", n)
	}
	// Two images, and a part labelled image/jpeg whose bytes are a PNG:
	// not an image, so neither carried nor counted.
	status, env, raw := post(t, f.door, imageSend([2]string{"image/png", png}, [2]string{"image/jpeg", png}, [2]string{"image/png", png + "2"}), nil)
	if status != 200 || env.Error != nil {
		t.Fatalf("status %d: %s", status, raw)
	}
	select {
	case <-f.backend.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not start")
	}
	f.backend.mu.Lock()
	task := f.backend.tasks[0]
	f.backend.mu.Unlock()
	if task.Text != "describe these" || len(task.Images) != 2 || task.Images[0].MediaType != "image/png" || string(task.Images[1].Data) != png+"2" {
		t.Fatalf("task %q with images %+v", task.Text, task.Images)
	}
}

func TestDefaultBodyHoldsImages(t *testing.T) {
	f := open(t, queueSleep, nil)
	if want := int64(DefaultMaxBodyBytes + 5*((5<<20+2)/3*4)); f.door.cfg.MaxBodyBytes != want {
		t.Fatalf("MaxBodyBytes %d, want %d", f.door.cfg.MaxBodyBytes, want)
	}
}

// A capsule whose model is handed text only (a process harness) refuses a
// message carrying an image, naming the part and why, instead of running
// the task without it; text still runs, and the card offers text only.
func TestTextOnlyRefusesImages(t *testing.T) {
	const why = "this capsule runs on a harness (transport: process), which is handed the task's text only"
	f := open(t, queueSleep, func(c *Config) { c.TextOnly = why })
	status, env, raw := post(t, f.door, imageSend([2]string{"image/png", string(pngBytes)}), nil)
	if status != 200 || code(env) != codeInvalidParams || !strings.Contains(string(raw), "message part 1: an image (image/png), but "+why) {
		t.Fatalf("status %d code %d: %s", status, code(env), raw)
	}
	if n := f.backend.count(RecordTaskReceived); n != 0 {
		t.Fatalf("the refused message became %d tasks", n)
	}
	// A part mislabelled as an image is no image: the message runs.
	if status, env, raw := post(t, f.door, imageSend([2]string{"image/jpeg", string(pngBytes)}), nil); status != 200 || env.Error != nil {
		t.Fatalf("status %d: %s", status, raw)
	}
	for _, tc := range []struct {
		textOnly string
		want     string
	}{{why, "[text/plain]"}, {"", "[text/plain image/gif image/jpeg image/png image/webp]"}} {
		f := open(t, queueSleep, func(c *Config) { c.TextOnly = tc.textOnly })
		card, err := agentcard.NewResolver(http.DefaultClient).Resolve(context.Background(), f.door.URL())
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(card.DefaultInputModes); got != tc.want {
			t.Errorf("text only %q: input modes %s, want %s", tc.textOnly, got, tc.want)
		}
	}
}
