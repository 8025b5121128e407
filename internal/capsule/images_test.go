package capsule

import (
	"bytes"
	"context"
	"testing"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule/capsuletest"
	"github.com/murmur/mur/internal/conversation"
	"github.com/murmur/mur/internal/images"
)

// A threaded context's record keeps its images: a later session's task
// gives the model the same image bytes, and context.images.keep applies
// to the loaded images as to new ones.
func TestThreadedImages(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	pol := conversation.Policy{Record: true, Threaded: true, Load: true,
		Store: conversation.Store{Dir: conversation.StoreDir(home, "cap"), Capsule: "cap"}}
	png := func(s string) images.Image {
		return images.Image{MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n" + s)}
	}
	drv := &convDriver{}
	open := func(keep int64) *Session {
		cc, inst := capsuletest.Capsule(t, capsuletest.Spec{OutputCap: 100, Window: 10000})
		cc.Context.Images.Keep = &keep
		s, err := OpenParts(context.Background(), Parts{Capsule: cc, Installed: inst, ManifestDir: proj, MurmurHome: home,
			Driver: drv, Conversation: Conversation{Policy: pol}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(keep int64, text string, img images.Image) {
		s := open(keep)
		o := s.RunTask(context.Background(), Task{ContextID: "ctx_i", Text: text, Images: []images.Image{img}})
		if err := s.Close(o); err != nil {
			t.Fatal(err)
		}
	}
	run(5, "first", png("one"))
	run(5, "second", png("two"))
	run(1, "third", png("three"))

	image := func(b agent.Block, img images.Image) bool {
		return b.Type == agent.BlockImage && b.MediaType == img.MediaType && bytes.Equal(b.Data, img.Data)
	}
	// The second session sent the first task's image from the record.
	if sent := drv.sent[1]; len(sent) != 3 || !image(sent[0].Content[1], png("one")) || !image(sent[2].Content[1], png("two")) {
		t.Fatalf("second request %+v", sent)
	}
	// keep: 1 — the two loaded images go as their line, the new one as bytes.
	sent := drv.sent[2]
	if len(sent) != 5 || !image(sent[4].Content[1], png("three")) {
		t.Fatalf("third request %+v", sent)
	}
	for i, img := range map[int]images.Image{0: png("one"), 2: png("two")} {
		if b := sent[i].Content[1]; b.Type != agent.BlockText || b.Text != images.Describe(img) {
			t.Fatalf("loaded image %d sent as %+v", i, b)
		}
	}
	// The record keeps every image's bytes.
	rec, err := conversation.ReadFile(pol.Store.Path("ctx_i"))
	if err != nil || len(rec.Entries) != 6 || !image(rec.Entries[0].Message.Content[1], png("one")) {
		t.Fatalf("record %+v, %v", rec, err)
	}
}
