package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/images"
)

// imageTools stands for a session whose one tool, "shot", attaches the
// given images to its text, as a session's dispatch path returns them.
type imageTools struct{ imgs []images.Image }

func (imageTools) ToolDefs() []agent.ToolDef {
	return []agent.ToolDef{{Name: "shot", Description: "Take screenshots.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

func (imageTools) CallTool(context.Context, agent.ToolCall) (string, bool) {
	panic("an ImageTools is called through CallToolImages")
}

func (it imageTools) CallToolImages(context.Context, agent.ToolCall) (string, bool, []images.Image) {
	return "three shots", false, it.imgs
}

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// TestImageItems: a tool's images follow its text as MCP image items,
// read back by the SDK's client with their bytes and media type; under
// context.images an image past max_bytes is refused too_large and one
// past max_per_turn (counted per tool call) turn_limit, each as a line
// in place of the item.
func TestImageItems(t *testing.T) {
	big := append(append([]byte{}, pngBytes...), make([]byte, 64)...)
	tools := imageTools{imgs: []images.Image{
		{MediaType: "image/png", Data: pngBytes},
		{MediaType: "image/png", Data: big},
		{MediaType: "image/png", Data: pngBytes},
		{MediaType: "image/png", Data: pngBytes},
	}}
	l, err := ServeLoopback(tools, Options{Images: images.Limits{Keep: 5, MaxBytes: 32, MaxPerTurn: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: l.URL, HTTPClient: &http.Client{Transport: bearerTransport(l.Token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 2 { // the count starts again with each call
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "shot", Arguments: map[string]any{}})
		if err != nil || res.IsError || len(res.Content) != 5 {
			t.Fatalf("call: %+v %v", res, err)
		}
		if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != "three shots" {
			t.Fatalf("first item %#v", res.Content[0])
		}
		for _, i := range []int{1, 3} {
			img, ok := res.Content[i].(*sdk.ImageContent)
			if !ok || img.MIMEType != "image/png" || string(img.Data) != string(pngBytes) {
				t.Fatalf("item %d: %#v", i, res.Content[i])
			}
		}
		if tc, ok := res.Content[2].(*sdk.TextContent); !ok || !strings.Contains(tc.Text, "refused too_large: 80 bytes is more than context.images.max_bytes (32)") {
			t.Fatalf("item 2: %#v", res.Content[2])
		}
		if tc, ok := res.Content[4].(*sdk.TextContent); !ok || !strings.Contains(tc.Text, "refused turn_limit") || !strings.HasPrefix(tc.Text, "[image image/png, 16 bytes, sha256 ") {
			t.Fatalf("item 4: %#v", res.Content[4])
		}
	}
}

// TestImageDefaults: a server given no limits applies the spec's
// defaults (5 per call).
func TestImageDefaults(t *testing.T) {
	var imgs []images.Image
	for range 6 {
		imgs = append(imgs, images.Image{MediaType: "image/png", Data: pngBytes})
	}
	l, err := ServeLoopback(imageTools{imgs: imgs}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: l.URL, HTTPClient: &http.Client{Transport: bearerTransport(l.Token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "shot", Arguments: map[string]any{}})
	if err != nil || len(res.Content) != 7 {
		t.Fatalf("call: %+v %v", res, err)
	}
	if _, ok := res.Content[5].(*sdk.ImageContent); !ok {
		t.Fatalf("the fifth image: %#v", res.Content[5])
	}
	if tc, ok := res.Content[6].(*sdk.TextContent); !ok || !strings.Contains(tc.Text, "refused turn_limit: this turn already returned context.images.max_per_turn (5) images") {
		t.Fatalf("the sixth image: %#v", res.Content[6])
	}
}
