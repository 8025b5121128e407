package hook

import (
	"errors"
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

func TestLiftTaskResult(t *testing.T) {
	m := abitest.New(1 << 12)
	put := func(at uint32, s string) { abi.PutU32(m, at, m.Put([]byte(s))); abi.PutU32(m, at+4, uint32(len(s))) }
	r := m.Alloc(48, 4)
	put(r+4, "t1")
	put(r+12, "ctx")
	put(r+20, "do it")
	abi.PutU8(m, r+28, 1)
	put(r+32, "done")
	got, err := liftTaskResult(m, r)
	want := TaskText{TaskID: "t1", ContextID: "ctx", Input: "do it", AgentResult: str("done")}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	e := m.Alloc(48, 4)
	abi.PutU8(m, e, 1)
	abi.PutU8(m, e+4, 1)
	put(e+8, "no task is in progress")
	_, err = liftTaskResult(m, e)
	var re *ReadError
	if !errors.As(err, &re) || re.Case != "no-task" || re.Msg != "no task is in progress" {
		t.Fatalf("err = %v", err)
	}
}

func TestLiftPageResult(t *testing.T) {
	m := abitest.New(1 << 12)
	put := func(at uint32, s string) { abi.PutU32(m, at, m.Put([]byte(s))); abi.PutU32(m, at+4, uint32(len(s))) }
	es := m.Alloc(2*entrySize, 8)
	abi.PutU64(m, es, 4)
	abi.PutU8(m, es+8, 1)
	put(es+12, "task-a")
	put(es+20, "user")
	put(es+28, "hello")
	abi.PutU64(m, es+entrySize, 5)
	put(es+entrySize+20, "assistant")
	put(es+entrySize+28, "hi")
	r := m.Alloc(32, 8)
	abi.PutU32(m, r+8, es)
	abi.PutU32(m, r+12, 2)
	abi.PutU8(m, r+16, 1)
	abi.PutU64(m, r+24, 6)
	got, err := liftPageResult(m, r)
	next := uint64(6)
	want := Page{Entries: []Entry{{Index: 4, TaskID: str("task-a"), Role: "user", Content: "hello"}, {Index: 5, Role: "assistant", Content: "hi"}}, Next: &next}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	e := m.Alloc(32, 8)
	abi.PutU8(m, e, 1)
	put(e+12, "set capabilities.conversation.read: true")
	_, err = liftPageResult(m, e)
	var re *ReadError
	if !errors.As(err, &re) || re.Case != "not-granted" || re.Msg != "set capabilities.conversation.read: true" {
		t.Fatalf("err = %v", err)
	}
}
