package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzMCPEntry feeds any bytes to the stdio entry (admitLines, with admit
// under it): every line it forwards to the SDK is a JSON-RPC 2.0 message
// or a batch of them within the limit, and every line it answers is a
// JSON-RPC error response whose message starts with an E-MCP code.
func FuzzMCPEntry(f *testing.F) {
	for _, seed := range []string{
		initialize,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\n\"method\":\"ping\"}",
		`{"jsonrpc":`, `[]`, `[1]`, `null`, `"x"`, `{"id":{"a":1}}`, "\r\n\r\n", strings.Repeat("a", 300),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &Server{limit: 256}
		var forwarded, replies bytes.Buffer
		if err := s.admitLines(bytes.NewReader(data), &forwarded, &lineWriter{w: &replies}); err != nil {
			t.Fatalf("admitLines: %v", err)
		}
		for _, line := range lines(forwarded.Bytes()) {
			if len(line) > s.limit {
				t.Fatalf("forwarded a %d-byte line over the %d-byte limit", len(line), s.limit)
			}
			if admit(line, s.limit) != nil {
				t.Fatalf("forwarded a line admit refuses: %q", line)
			}
			trimmed := bytes.TrimSpace(line)
			elems := []json.RawMessage{trimmed}
			if trimmed[0] == '[' {
				if err := json.Unmarshal(trimmed, &elems); err != nil {
					t.Fatalf("forwarded batch %q: %v", line, err)
				}
			}
			for _, e := range elems {
				if _, err := jsonrpc.DecodeMessage(e); err != nil {
					t.Fatalf("forwarded %q, which the SDK cannot decode: %v", e, err)
				}
			}
		}
		for _, line := range lines(replies.Bytes()) {
			var r struct {
				Version string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &r); err != nil || r.Version != "2.0" || r.ID == nil || r.Error == nil {
				t.Fatalf("reply %q is not a JSON-RPC error response (%v)", line, err)
			}
			if !strings.HasPrefix(r.Error.Message, "E-MCP-00") {
				t.Fatalf("reply %q carries no code", line)
			}
		}
	})
}

func lines(b []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}
