package act

import (
	"time"

	"github.com/murmur/mur/sdk/go/act/internal/actabi"
	"github.com/murmur/mur/sdk/go/internal/abi"
)

// readOnlyTrue is the metadata value of std:read-only: CBOR true.
var readOnlyTrue = []byte{0xf5}

// listTools lowers the registered tools.
func listTools(m abi.Memory) uint32 {
	defs := make([]actabi.Def, len(tools))
	for i, t := range tools {
		defs[i] = actabi.Def{Name: t.Name, Description: t.Description, Schema: t.Schema}
		if defs[i].Schema == "" {
			defs[i].Schema = `{"type":"object"}`
		}
		if t.ReadOnly {
			defs[i].Metadata = append(defs[i].Metadata, [2][]byte{[]byte("std:read-only"), readOnlyTrue})
		}
		if t.Timeout > 0 {
			ms, _ := CBOR(uint64(max(t.Timeout/time.Millisecond, 1)))
			defs[i].Metadata = append(defs[i].Metadata, [2][]byte{[]byte("std:timeout-ms"), ms})
		}
	}
	return actabi.ListTools(m, defs)
}

// callTool lifts call-tool's six flat arguments, runs the tool and
// lowers its events.
func callTool(m abi.Memory, np, nl, ap, al, mp, ml uint32, reset func()) uint32 {
	name := abi.String(m, np, nl)
	raw := []byte(abi.String(m, ap, al))
	meta := actabi.Meta(m, mp, ml)
	reset()
	events := call(name, raw, meta)
	out := make([]actabi.Event, len(events))
	for i, e := range events {
		if e.Err != nil {
			out[i] = actabi.Event{Err: true, Kind: e.Err.Kind, Message: e.Err.Message}
			continue
		}
		out[i] = actabi.Event{Data: e.Data, Mime: e.MimeType}
	}
	return actabi.Events(m, out)
}
