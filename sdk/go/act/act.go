// Package act writes an ACT tool component (spec 003) as ordinary Go: a
// tool provider serving the sync mirror act:tools-sync/tool-provider-sync
// @0.1.0, and with package act/sessions a session provider too.
//
//	func init() {
//		act.Serve(act.Tool{
//			Name:        "greet",
//			Description: "Say hello.",
//			Schema:      `{"type":"object","properties":{"name":{"type":"string"}}}`,
//			Call: func(c act.Call) []act.Event {
//				return []act.Event{act.Text("hello " + c.Args["name"].(string))}
//			},
//		})
//	}
//
//	func main() {}
//
// Arguments arrive as deterministic CBOR; the SDK decodes them into
// Call.Args with github.com/fxamacker/cbor/v2 (text as string, integers
// as int64 (past its range, and bignums, as big.Int), floats as float64,
// byte strings as []byte, objects as map[string]any, arrays as []any). tools/guest/build.sh builds the component and writes its
// act:component section from the artifact's murmur.yaml.
package act

import "time"

// Tool is one tool the component lists.
type Tool struct {
	Name        string
	Description string
	// Schema is the parameters-schema, a JSON Schema document.
	Schema string
	// ReadOnly marks the tool std:read-only.
	ReadOnly bool
	// Timeout, when positive, is declared as the tool's std:timeout-ms
	// (whole milliseconds, at least 1): the host stops a call that runs
	// past it.
	Timeout time.Duration
	Call    func(Call) []Event
}

// Call is one call-tool.
type Call struct {
	// Args is the decoded CBOR arguments (a map[string]any for an object).
	Args map[string]any
	// Raw is the CBOR as the host sent it.
	Raw []byte
	// SessionID is the std:session-id the call carries, "" without one.
	SessionID string
	// Metadata is every metadata entry, values as CBOR.
	Metadata map[string][]byte
}

// Event is one tool-event: a content part, or the terminal error.
type Event struct {
	Data     []byte
	MimeType string // "" leaves the part untyped
	Err      *Error
}

// Error is act:core's error with a plain message.
type Error struct {
	Kind    string
	Message string
}

// The well-known error kinds.
const (
	KindNotFound         = "std:not-found"
	KindInvalidArgs      = "std:invalid-args"
	KindTimeout          = "std:timeout"
	KindCapabilityDenied = "std:capability-denied"
	KindInternal         = "std:internal"
	KindSessionNotFound  = "std:session-not-found"
)

// Text is a text/plain content part.
func Text(s string) Event { return Event{Data: []byte(s), MimeType: "text/plain"} }

// JSON is an application/json content part holding doc.
func JSON(doc string) Event { return Event{Data: []byte(doc), MimeType: "application/json"} }

// Fail is the terminal error event.
func Fail(kind, msg string) Event { return Event{Err: &Error{Kind: kind, Message: msg}} }

var tools []Tool

// Serve registers the component's tools; call it from init (a c-shared
// guest's main never runs).
func Serve(t ...Tool) { tools = append(tools, t...) }

// call dispatches one call-tool; an unknown name is std:not-found.
func call(name string, raw []byte, meta map[string][]byte) []Event {
	for _, t := range tools {
		if t.Name != name {
			continue
		}
		v, err := decodeCBOR(raw)
		if err != nil {
			return []Event{Fail(KindInvalidArgs, "the arguments are not CBOR: "+err.Error())}
		}
		args, _ := v.(map[string]any)
		c := Call{Args: args, Raw: raw, Metadata: meta}
		if id, ok := meta["std:session-id"]; ok {
			if s, err := decodeCBOR(id); err == nil {
				c.SessionID, _ = s.(string)
			}
		}
		return t.Call(c)
	}
	return []Event{Fail(KindNotFound, "no tool named "+name)}
}
