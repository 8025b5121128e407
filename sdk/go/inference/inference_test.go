package inference

import (
	"errors"
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

func TestLowerMessages(t *testing.T) {
	m := abitest.New(1 << 12)
	p, n := lowerMessages(m, []Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "yo"}})
	if n != 2 {
		t.Fatalf("len = %d", n)
	}
	var got []Message
	for i := range n {
		at := p + i*messageSize
		got = append(got, Message{Role: abi.GetString(m, at), Content: abi.GetString(m, at+8)})
	}
	if want := []Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "yo"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	if _, n := lowerMessages(m, nil); n != 0 {
		t.Fatalf("empty list has %d", n)
	}
}

func TestLiftInferenceResult(t *testing.T) {
	m := abitest.New(1 << 12)
	put := func(at uint32, s string) { abi.PutU32(m, at, m.Put([]byte(s))); abi.PutU32(m, at+4, uint32(len(s))) }
	r := m.Alloc(40, 8)
	put(r+8, "a summary")
	put(r+16, "gpt-4o-mini")
	abi.PutU64(m, r+24, 120)
	abi.PutU64(m, r+32, 7)
	got, err := liftResult(m, r)
	want := Response{Text: "a summary", ModelUsed: "gpt-4o-mini", InputTokens: 120, OutputTokens: 7}
	if err != nil || got != want {
		t.Fatalf("got %+v, %v", got, err)
	}
	e := m.Alloc(40, 8)
	abi.PutU8(m, e, 1)
	put(e+8, "spend ceiling reached")
	_, err = liftResult(m, e)
	var ie *Error
	if !errors.As(err, &ie) || ie.Msg != "spend ceiling reached" {
		t.Fatalf("err = %v", err)
	}
}
