package agent

import (
	"github.com/murmur/mur/internal/images"
)

// imageLimits is context.images as the plan resolved it; a plan built
// without NewPlan (a test's literal) takes the spec's defaults.
func (p *Plan) imageLimits() images.Limits {
	if p.Images == (images.Limits{}) {
		l, _ := images.Resolve(nil)
		return l
	}
	return p.Images
}

// toolImages admits the images one call returned under the turn's count
// (context.images max_bytes and max_per_turn), as image blocks naming the
// call. A refused image leaves a line in the call's text instead, so the
// model knows it was returned and why it cannot see it.
func toolImages(turn *images.Turn, callID string, imgs []images.Image) (blocks []Block, refused string) {
	for _, img := range imgs {
		if err := turn.Admit(img); err != nil {
			refused += "\n" + err.Error()
			continue
		}
		blocks = append(blocks, Block{Type: BlockImage, ToolUseID: callID, MediaType: img.MediaType, Data: img.Data})
	}
	return blocks, refused
}

// keepImages applies context.images.keep to the messages of a request: the
// newest keep images go as bytes, each older one as the one line
// images.Describe gives it. msgs is returned as it is when nothing is
// reduced; otherwise the messages holding a reduced image are copied, so
// the conversation itself (and its record) keeps every image.
func keepImages(msgs []Message, keep int) []Message {
	seen := 0
	var out []Message
	for i := len(msgs) - 1; i >= 0; i-- {
		var content []Block
		for j := len(msgs[i].Content) - 1; j >= 0; j-- {
			b := msgs[i].Content[j]
			if b.Type != BlockImage {
				continue
			}
			seen++
			if seen <= keep {
				continue
			}
			if content == nil {
				content = append([]Block(nil), msgs[i].Content...)
			}
			content[j] = Block{Type: BlockText, Text: images.Describe(images.Image{MediaType: b.MediaType, Data: b.Data})}
		}
		if content != nil {
			if out == nil {
				out = append([]Message(nil), msgs...)
			}
			out[i].Content = content
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// taskContent is a task's first user message: its text, then the images
// its message carried (an A2A message's image parts).
func taskContent(text string, imgs []images.Image) []Block {
	content := []Block{{Type: BlockText, Text: text}}
	for _, img := range imgs {
		content = append(content, Block{Type: BlockImage, MediaType: img.MediaType, Data: img.Data})
	}
	return content
}
