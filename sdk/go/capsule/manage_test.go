package capsule

import (
	"errors"
	"slices"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

// putArtifact stores an artifact-summary at addr as the host lowers it.
func putArtifact(m *abitest.Memory, addr uint32, a Artifact, rt uint8) {
	abi.PutString(m, addr, a.Name)
	abi.PutString(m, addr+8, a.Version)
	abi.PutU8(m, addr+16, rt)
}

// manage's results lift from the canonical ABI layout: a pull's
// artifact-summary, an err's text, a list, an artifact-info and a
// runtime-state.
func TestLiftManage(t *testing.T) {
	m := abitest.New(4096)
	ret := m.Alloc(64, 8)

	abi.PutU8(m, ret, 0)
	putArtifact(m, ret+4, Artifact{Name: "ana/jq", Version: "1.2.0"}, 1)
	at, err := liftResult(m, ret)
	if got := liftArtifact(m, at); err != nil || got != (Artifact{"ana/jq", "1.2.0", "native"}) {
		t.Fatalf("pull ok = %+v, %v", got, err)
	}

	abi.PutU8(m, ret, 1)
	abi.PutString(m, ret+4, "E-RUN-905: not admitted")
	var me *ManageError
	if _, err := liftResult(m, ret); !errors.As(err, &me) || me.Msg != "E-RUN-905: not admitted" {
		t.Fatalf("pull err = %v", err)
	}

	list := m.Alloc(40, 4)
	putArtifact(m, list, Artifact{Name: "ana/a", Version: "1"}, 0)
	putArtifact(m, list+20, Artifact{Name: "ana/b", Version: "2"}, 1)
	abi.PutU32(m, ret, list)
	abi.PutU32(m, ret+4, 2)
	if got := liftArtifacts(m, ret); !slices.Equal(got, []Artifact{{"ana/a", "1", "wasm"}, {"ana/b", "2", "native"}}) {
		t.Fatalf("list = %+v", got)
	}

	info := m.Alloc(60, 4)
	abi.PutString(m, info, "ana/jq")
	abi.PutString(m, info+8, "1.2.0")
	abi.PutString(m, info+16, "Queries JSON.")
	abi.PutStringList(m, info+24, []string{"json"})
	abi.PutU8(m, info+32, 0)
	schema := `{"type":"object"}`
	abi.PutOptString(m, info+36, &schema)
	abi.PutOptString(m, info+48, nil)
	got := liftInfo(m, info)
	if got.Name != "ana/jq" || got.Description != "Queries JSON." || !slices.Equal(got.Tags, []string{"json"}) || got.Runtime != "wasm" ||
		got.InputSchema == nil || *got.InputSchema != schema || got.OutputSchema != nil {
		t.Fatalf("info = %+v", got)
	}

	state := m.Alloc(24, 4)
	abi.PutString(m, state, "ses_1")
	abi.PutU32(m, state+8, list)
	abi.PutU32(m, state+12, 1)
	abi.PutString(m, state+16, `{"install_tool":["ana/*"]}`)
	if s := liftState(m, state); s.CapsuleID != "ses_1" || len(s.Installed) != 1 || s.Installed[0].Name != "ana/a" || s.Capabilities != `{"install_tool":["ana/*"]}` {
		t.Fatalf("state = %+v", s)
	}
}
