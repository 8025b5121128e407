package providertest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseScript(t *testing.T) {
	cases := []struct {
		name, in string
		want     []Step
		err      string
	}{
		{"completion", `[{"text":"hi","calls":[{"id":"c1","name":"t","input":"{}"}],"stop":"max_tokens","input_tokens":3,"output_tokens":4,"cached_tokens":1}]`,
			[]Step{{Text: "hi", Calls: []Call{{ID: "c1", Name: "t", Input: "{}"}}, Stop: "max_tokens", InputTokens: 3, OutputTokens: 4, CachedTokens: 1}}, ""},
		{"error status", `[{"status":429,"body":"slow","header":{"retry-after":"1"}}]`,
			[]Step{{Status: 429, Body: "slow", Header: map[string]string{"retry-after": "1"}}}, ""},
		{"faults", `[{"drop":true},{"text":"x","break_after":2,"delay_ms":15,"no_usage":true}]`,
			[]Step{{Drop: true}, {Text: "x", BreakAfter: 2, Delay: 15 * time.Millisecond, NoUsage: true}}, ""},
		{"empty", `[]`, []Step{}, ""},
		{"misspelt key", `[{"txt":"hi"}]`, nil, `unknown field "txt"`},
		{"not a list", `{"text":"hi"}`, nil, "cannot unmarshal"},
		{"not JSON", `[`, nil, "unexpected EOF"},
		{"trailing data", `[]0`, nil, "data after the array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseScript([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestServeClose: Serve answers its script on loopback without a
// testing.TB, and Close stops it.
func TestServeClose(t *testing.T) {
	s, err := Serve(Step{Text: "hello", InputTokens: 2, OutputTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("URL = %q, want loopback", s.URL)
	}
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if len(out.Choices) != 1 || out.Choices[0].Message.Content != "hello" {
		t.Fatalf("answer = %+v", out)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`)); err == nil {
		t.Fatal("the server still answers after Close")
	}
}

func FuzzParseScript(f *testing.F) {
	for _, s := range []string{`[]`, `[{"text":"a","calls":[{"id":"1","name":"n","input":"{}"}]}]`, `[{"status":500,"body":"x","header":{"a":"b"}}]`, `[{"drop":true,"delay_ms":-1}]`, `null`} {
		f.Add([]byte(s))
	}
	// A script either fails with an error or yields one Step per element,
	// every tool call kept.
	f.Fuzz(func(t *testing.T, b []byte) {
		steps, err := ParseScript(b)
		if err != nil {
			return
		}
		var raw []json.RawMessage
		if json.Unmarshal(b, &raw) != nil || len(raw) != len(steps) {
			t.Fatalf("%q: %d steps from a script json reads as %d elements", b, len(steps), len(raw))
		}
	})
}
