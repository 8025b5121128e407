// Package sessions adds a session provider to an ACT component written
// with sdk/go/act: importing it exports
// act:sessions-sync/session-provider-sync@0.1.0, and tools/guest/build.sh
// builds the component against the world that has it.
//
//	func init() {
//		sessions.Serve(sessions.Provider{
//			ArgsSchema: `{"type":"object","required":["namespace"]}`,
//			Open:  func(args map[string]any) (string, *act.Error) { ... },
//			Close: func(id string) { ... },
//		})
//	}
//
// The host opens a session before the first call, passes its id as
// Call.SessionID on every call, and closes it before dropping the
// component, whatever the outcome.
package sessions

import (
	"github.com/murmur/mur/sdk/go/act"
	"github.com/murmur/mur/sdk/go/act/internal/actabi"
	"github.com/murmur/mur/sdk/go/internal/abi"
)

// Provider serves open-session and close-session.
type Provider struct {
	// ArgsSchema is the JSON Schema of the open-session args object.
	ArgsSchema string
	// Open receives each args entry's key with its CBOR value decoded.
	Open func(args map[string]any) (id string, err *act.Error)
	// Close must not fail: the spec has close-session swallow errors.
	Close func(id string)
}

var provider *Provider

// Serve registers the session provider; call it from init.
func Serve(p Provider) { provider = &p }

func argsSchema(m abi.Memory) uint32 {
	if provider == nil {
		return actabi.ResultString(m, "", act.KindInternal, "the component registered no session provider: call sessions.Serve from init")
	}
	s := provider.ArgsSchema
	if s == "" {
		s = `{"type":"object"}`
	}
	return actabi.ResultString(m, s, "", "")
}

func openSession(m abi.Memory, ap, al uint32, reset func()) uint32 {
	entries := actabi.MetaList(m, ap, al)
	reset()
	if provider == nil || provider.Open == nil {
		return actabi.ResultSession(m, "", act.KindInternal, "the component registered no session provider: call sessions.Serve from init")
	}
	args := make(map[string]any, len(entries))
	for _, e := range entries {
		v, err := act.Decode(e[1])
		if err != nil {
			return actabi.ResultSession(m, "", act.KindInvalidArgs, "session arg "+string(e[0])+" is not CBOR: "+err.Error())
		}
		args[string(e[0])] = v
	}
	id, err := provider.Open(args)
	if err != nil {
		return actabi.ResultSession(m, "", err.Kind, err.Message)
	}
	return actabi.ResultSession(m, id, "", "")
}

func closeSession(m abi.Memory, p, n uint32, reset func()) {
	id := abi.String(m, p, n)
	reset()
	if provider != nil && provider.Close != nil {
		provider.Close(id)
	}
}
