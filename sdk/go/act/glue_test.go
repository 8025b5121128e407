package act

import (
	"testing"
	"time"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

// TestCallToolGlue lowers call-tool's arguments as the host does, runs
// the glue and reads the events back at the canonical ABI's offsets.
func TestCallToolGlue(t *testing.T) {
	tools = nil
	Serve(Tool{Name: "echo", Call: func(c Call) []Event {
		return []Event{Text(c.Args["text"].(string) + " in " + c.SessionID), Fail(KindTimeout, "slow"), Text("never sent")}
	}})
	m := abitest.New(1 << 14)
	name, nl := abi.LowerString(m, "echo")
	args, al := abi.LowerString(m, "\xa1\x64text\x62hi") // {"text": "hi"}
	meta := m.Alloc(16, 4)
	abi.PutString(m, meta, "std:session-id")
	abi.PutString(m, meta+8, string(cborText("s-1")))
	reset := false
	ret := callTool(m, name, nl, args, al, meta, 1, func() { reset = true })
	if !reset {
		t.Fatal("the arguments' arena was not reset after they were copied")
	}
	base, n := abi.U32(m, ret), abi.U32(m, ret+4)
	if n != 2 {
		t.Fatalf("%d events, want 2 (nothing after the error)", n)
	}
	if abi.U8(m, base) != 0 || abi.GetString(m, base+4) != "hi in s-1" || abi.U8(m, base+12) != 1 || abi.GetString(m, base+16) != "text/plain" {
		t.Fatalf("content event: %q %q", abi.GetString(m, base+4), abi.GetString(m, base+16))
	}
	e := base + 32
	if abi.U8(m, e) != 1 || abi.GetString(m, e+4) != KindTimeout || abi.U8(m, e+12) != 0 || abi.GetString(m, e+16) != "slow" {
		t.Fatalf("error event: kind %q message %q", abi.GetString(m, e+4), abi.GetString(m, e+16))
	}
	// An unknown tool is std:not-found; CBOR that is not is std:invalid-args.
	unknown, ul := abi.LowerString(m, "nope")
	ret = callTool(m, unknown, ul, args, al, 0, 0, func() {})
	if ev := abi.U32(m, ret); abi.GetString(m, ev+4) != KindNotFound {
		t.Fatalf("unknown tool kind %q", abi.GetString(m, ev+4))
	}
	bad, bl := abi.LowerString(m, "\xa1\x64te")
	ret = callTool(m, name, nl, bad, bl, 0, 0, func() {})
	if ev := abi.U32(m, ret); abi.GetString(m, ev+4) != KindInvalidArgs {
		t.Fatalf("bad CBOR kind %q", abi.GetString(m, ev+4))
	}
}

func TestListToolsGlue(t *testing.T) {
	tools = nil
	Serve(Tool{Name: "a", Description: "first", ReadOnly: true}, Tool{Name: "b", Schema: `{"type":"object","required":["x"]}`, Timeout: 1500 * time.Millisecond})
	m := abitest.New(1 << 14)
	ret := listTools(m)
	if abi.U8(m, ret) != 0 || abi.U32(m, ret+16) != 2 {
		t.Fatalf("result disc %d, %d tools", abi.U8(m, ret), abi.U32(m, ret+16))
	}
	d := abi.U32(m, ret+12)
	if abi.GetString(m, d) != "a" || abi.GetString(m, d+12) != "first" || abi.GetString(m, d+20) != `{"type":"object"}` || abi.U32(m, d+32) != 1 {
		t.Fatalf("first definition: %q %q %q", abi.GetString(m, d), abi.GetString(m, d+12), abi.GetString(m, d+20))
	}
	ro := abi.U32(m, d+28)
	if abi.GetString(m, ro) != "std:read-only" || abi.GetString(m, ro+8) != "\xf5" {
		t.Fatal("std:read-only is not CBOR true")
	}
	if abi.GetString(m, d+36+20) != `{"type":"object","required":["x"]}` {
		t.Fatalf("second schema %q", abi.GetString(m, d+36+20))
	}
	// Timeout is declared as std:timeout-ms, CBOR unsigned 1500.
	if abi.U32(m, d+36+32) != 1 {
		t.Fatalf("second tool has %d metadata entries", abi.U32(m, d+36+32))
	}
	to := abi.U32(m, d+36+28)
	if abi.GetString(m, to) != "std:timeout-ms" || abi.GetString(m, to+8) != "\x19\x05\xdc" {
		t.Fatalf("std:timeout-ms entry %q = %x", abi.GetString(m, to), abi.GetString(m, to+8))
	}
}

// cborText is CBOR text, as the host encodes std:session-id.
func cborText(s string) []byte {
	b, err := CBOR(s)
	if err != nil {
		panic(err)
	}
	return b
}
