package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/murmur/mur/internal/diag"
)

// JSON-RPC 2.0 error codes the server answers with.
const (
	codeParseError     = jsonrpc.CodeParseError
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
	codeInvalidParams  = jsonrpc.CodeInvalidParams
)

// rpcError is a JSON-RPC error whose message starts with its diag code,
// which its data repeats ({"code": "E-MCP-…"}) for a client to test.
func rpcError(code int64, c diag.Code, msg string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]string{"code": string(c)})
	return &jsonrpc.Error{Code: code, Message: string(c) + ": " + msg, Data: data}
}

// refusal is an inbound message the server does not hand to the SDK: the
// error reply it gets instead (with the request's id when one could be
// read, else null).
type refusal struct {
	id  jsonrpc.ID
	err *jsonrpc.Error
}

// reply is the refusal's JSON-RPC response, one line. Its id is null when
// none could be read, as JSON-RPC 2.0 has it (the SDK's encoder would
// leave the member out).
func (r *refusal) reply() []byte {
	b, _ := json.Marshal(struct {
		Version string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", r.id.Raw(), r.err})
	return b
}

// admit is every message's entry: one message (or batch) of at most limit
// bytes, that is JSON, and whose every element is a JSON-RPC 2.0 message.
// A message admit returns nil for goes to the SDK unchanged; the SDK
// answers everything past this shape (unknown methods, bad params).
func admit(msg []byte, limit int) *refusal {
	if len(msg) > limit {
		return &refusal{err: rpcError(codeInvalidRequest, diag.MCPTooLarge,
			fmt.Sprintf("the message is larger than this server's limit of %d bytes: it was not read; send smaller arguments (a large input belongs in a file in the work folder)", limit))}
	}
	trimmed := bytes.TrimSpace(msg)
	if !json.Valid(trimmed) {
		return &refusal{err: rpcError(codeParseError, diag.MCPMalformed,
			"the message is not JSON: it was not read; send one JSON-RPC 2.0 message per line (stdio) or per request body (HTTP)")}
	}
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(trimmed, &elems) != nil || len(elems) == 0 {
			return &refusal{err: rpcError(codeInvalidRequest, diag.MCPMalformed, "an empty batch, or a batch that is not an array of messages: it was not read")}
		}
		for _, e := range elems {
			if r := admitOne(e); r != nil {
				return r
			}
		}
		return nil
	}
	return admitOne(trimmed)
}

// admitOne checks one element: a JSON-RPC 2.0 request, notification or
// response.
func admitOne(msg []byte) *refusal {
	if _, err := jsonrpc.DecodeMessage(msg); err == nil && hasVersion(msg) {
		return nil
	}
	r := &refusal{err: rpcError(codeInvalidRequest, diag.MCPMalformed,
		`the message is not a JSON-RPC 2.0 message: it was not read; send {"jsonrpc":"2.0","id":…,"method":…,"params":{…}}`)}
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(msg, &probe) == nil {
		if id, err := jsonrpc.MakeID(probe.ID); err == nil {
			r.id = id
		}
	}
	return r
}

// hasVersion reports whether msg says "jsonrpc": "2.0", which the SDK's
// decoder does not check.
func hasVersion(msg []byte) bool {
	var v struct {
		Version string `json:"jsonrpc"`
	}
	return json.Unmarshal(msg, &v) == nil && v.Version == "2.0"
}
