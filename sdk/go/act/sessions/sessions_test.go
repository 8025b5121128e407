package sessions

import (
	"testing"

	"github.com/murmur/mur/sdk/go/act"
	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

func TestSessionGlue(t *testing.T) {
	var closed []string
	Serve(Provider{Open: func(args map[string]any) (string, *act.Error) {
		ns, _ := args["namespace"].(string)
		if ns == "" {
			return "", &act.Error{Kind: act.KindInvalidArgs, Message: "namespace"}
		}
		return ns + "-1", nil
	}, Close: func(id string) { closed = append(closed, id) }})
	m := abitest.New(1 << 14)
	if r := argsSchema(m); abi.U8(m, r) != 0 || abi.GetString(m, r+4) != `{"type":"object"}` {
		t.Fatalf("args schema %q", abi.GetString(m, r+4))
	}
	args := m.Alloc(16, 4)
	abi.PutString(m, args, "namespace")
	abi.PutString(m, args+8, "\x65notes") // CBOR "notes"
	r := openSession(m, args, 1, func() {})
	if abi.U8(m, r) != 0 || abi.GetString(m, r+4) != "notes-1" {
		t.Fatalf("open-session: disc %d id %q", abi.U8(m, r), abi.GetString(m, r+4))
	}
	r = openSession(m, 0, 0, func() {})
	if abi.U8(m, r) != 1 || abi.GetString(m, r+4) != act.KindInvalidArgs || abi.GetString(m, r+16) != "namespace" {
		t.Fatalf("open-session without args: disc %d kind %q", abi.U8(m, r), abi.GetString(m, r+4))
	}
	id, n := abi.LowerString(m, "notes-1")
	closeSession(m, id, n, func() {})
	if len(closed) != 1 || closed[0] != "notes-1" {
		t.Fatalf("closed %v", closed)
	}
}
