package agent_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/providertest"
)

// pngN is a distinct PNG-sniffing image for each n.
func pngN(n int) []byte { return fmt.Appendf([]byte("\x89PNG\r\n\x1a\n"), "image-%02d", n) }

// shotTool returns three images per call, numbered across calls, as an
// ACT component's image parts land in agent.Result.Images.
type shotTool struct{ n *int }

func (s shotTool) Def() agent.ToolDef {
	return agent.ToolDef{Name: "shot", Description: "Take screenshots.", Kind: agent.KindTool,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (s shotTool) Call(context.Context, json.RawMessage) (agent.Result, error) {
	r := agent.Result{Status: agent.StatusPassed, Data: "three screenshots"}
	for range 3 {
		*s.n++
		r.Images = append(r.Images, images.Image{MediaType: "image/png", Data: pngN(*s.n)})
	}
	return r, nil
}

// wireImages lists, in order, the base64 data of every image a provider
// request carries (Anthropic image source blocks, top level or inside a
// tool_result; OpenAI image_url data URLs), and fails on any other form.
func wireImages(t *testing.T, wire string, req providertest.Request) []string {
	t.Helper()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			switch {
			case wire == providertest.Anthropic && v["type"] == "image":
				src, _ := v["source"].(map[string]any)
				if src["type"] != "base64" || src["media_type"] != "image/png" {
					t.Fatalf("image block %v", v)
				}
				out = append(out, src["data"].(string))
				return
			case wire == providertest.OpenAI && v["type"] == "image_url":
				u, _ := v["image_url"].(map[string]any)
				url, _ := u["url"].(string)
				data, ok := strings.CutPrefix(url, "data:image/png;base64,")
				if !ok {
					t.Fatalf("image_url %v", v)
				}
				out = append(out, data)
				return
			}
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(req.Body["messages"])
	return out
}

func b64(ns ...int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, base64.StdEncoding.EncodeToString(pngN(n)))
	}
	return out
}

// TestToolImagesReachTheModel: a tool's images travel to the model as
// image bytes on both wires; max_per_turn counts a turn's calls together
// (the sixth image of a turn is refused turn_limit, named in the call's
// text); keep sends the newest images as bytes and each older one as its
// images.Describe line.
func TestToolImagesReachTheModel(t *testing.T) {
	for _, wire := range []string{providertest.Anthropic, providertest.OpenAI} {
		t.Run(wire, func(t *testing.T) {
			n := 0
			r := newRun(t, wire,
				providertest.Step{Calls: []providertest.Call{{ID: "c1", Name: "shot", Input: `{}`}, {ID: "c2", Name: "shot", Input: `{}`}}},
				providertest.Step{Calls: []providertest.Call{{ID: "c3", Name: "shot", Input: `{}`}}},
				providertest.Step{Text: "Seen."},
			)
			r.opts.Tools = []agent.Tool{shotTool{n: &n}}
			keep := int64(4)
			r.opts.Capsule.Context.Images.Keep = &keep
			r.launch()
			r.wantCode(0)
			reqs := r.srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			// Turn 1: c1's three and c2's first two; c2's third is past
			// max_per_turn (5). keep 4 reduces the oldest.
			if got, want := wireImages(t, wire, reqs[1]), b64(2, 3, 4, 5); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("second request images %d, want images 2-5", len(got))
			}
			// Anthropic: each image inside its call's tool_result; OpenAI:
			// after the tool messages, in a user message naming the call
			// (the reduced image 1's line first, as the message's text).
			msgs := reqs[1].Body["messages"].([]any)
			last := msgs[len(msgs)-1].(map[string]any)
			if wire == providertest.Anthropic {
				tr := last["content"].([]any)[0].(map[string]any)
				parts, _ := tr["content"].([]any)
				if tr["tool_use_id"] != "c1" || len(parts) != 3 || parts[0].(map[string]any)["text"] != "three screenshots" {
					t.Fatalf("c1's tool_result %v", tr)
				}
			} else {
				parts, _ := last["content"].([]any)
				if last["role"] != "user" || msgs[len(msgs)-2].(map[string]any)["role"] != "tool" || len(parts) != 9 ||
					parts[1].(map[string]any)["text"] != "[image from tool call c1]" {
					t.Fatalf("the images' user message %v", last)
				}
			}
			raw := string(reqs[1].Raw)
			if !strings.Contains(raw, "refused turn_limit: this turn already returned context.images.max_per_turn (5) images") {
				t.Fatalf("no turn_limit refusal in %s", raw)
			}
			if d := images.Describe(images.Image{MediaType: "image/png", Data: pngN(1)}); !strings.Contains(raw, d) {
				t.Fatalf("image 1 not reduced to %q", d)
			}
			// Turn 2 counts afresh: 7, 8, 9 admitted; keep leaves 5, 7, 8, 9.
			if got, want := wireImages(t, wire, reqs[2]), b64(5, 7, 8, 9); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("third request images %d, want 5, 7, 8, 9", len(got))
			}
			for _, i := range []int{1, 2, 3, 4} {
				if d := images.Describe(images.Image{MediaType: "image/png", Data: pngN(i)}); !strings.Contains(string(reqs[2].Raw), d) {
					t.Fatalf("image %d not reduced in the third request", i)
				}
			}
		})
	}
}

// TestDoorImagesReachTheModel: the images a door task's message carried
// go to the model after the task's text, on both wires, and keep counts
// them with the tools' images.
func TestDoorImagesReachTheModel(t *testing.T) {
	for _, wire := range []string{providertest.Anthropic, providertest.OpenAI} {
		t.Run(wire, func(t *testing.T) {
			r := newRun(t, wire, providertest.Step{Text: "A red square and a blue one."})
			r.opts.LaunchTask = ""
			r.opts.Stderr = &r.stderr
			keep := int64(1)
			r.opts.Capsule.Context.Images.Keep = &keep
			s, err := capsule.OpenParts(context.Background(), r.opts)
			if err != nil {
				t.Fatal(err)
			}
			if l := s.ImageLimits(); l.Keep != 1 || l.MaxPerTurn != 5 || l.MaxBytes != 5<<20 {
				t.Fatalf("session limits %+v", l)
			}
			out := s.DoorBackend().RunTask(context.Background(), door.Task{ID: "tsk_img", Text: "What are these?",
				Images: []images.Image{{MediaType: "image/png", Data: pngN(1)}, {MediaType: "image/png", Data: pngN(2)}}}, nil)
			if err := s.Close(agent.Outcome{Status: agent.ExitOK}); err != nil {
				t.Fatal(err)
			}
			if out.State != door.Completed {
				t.Fatalf("outcome %+v", out)
			}
			req := r.srv.Requests()[0]
			if got := wireImages(t, wire, req); len(got) != 1 || got[0] != b64(2)[0] {
				t.Fatalf("images sent %d, want only the newest", len(got))
			}
			first := req.Body["messages"].([]any)[0].(map[string]any)
			parts := first["content"].([]any)
			text := parts[0].(map[string]any)["text"]
			if first["role"] != "user" || text != "What are these?" || len(parts) != 3 {
				t.Fatalf("first message %v", first)
			}
			if d := images.Describe(images.Image{MediaType: "image/png", Data: pngN(1)}); parts[1].(map[string]any)["text"] != d {
				t.Fatalf("older image not reduced: %v", parts[1])
			}
		})
	}
}
