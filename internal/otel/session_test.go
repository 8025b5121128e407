package otel_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/capsule/capsuletest"
	"github.com/murmur/mur/internal/otel"
)

// span is what a receiver says it holds, in the terms the checks need.
type span struct {
	name, id, parent, trace string
	attrs                   map[string]string
}

// runSession runs a real session (capsule, agent loop, a skill tool) with
// observability.otel_endpoint set: turn 1 calls the skill, turn 2 answers.
func runSession(t testing.TB, endpoint, capsuleName string) (sessionID, taskID string, stderr string) {
	return runSessionModel(t, endpoint, capsuleName, 0)
}

// runSessionModel is runSession with each model call taking turnDelay.
func runSessionModel(t testing.TB, endpoint, capsuleName string, turnDelay time.Duration) (sessionID, taskID string, stderr string) {
	return runSessionAfter(t, endpoint, capsuleName, turnDelay, nil)
}

// runSessionAfter is runSessionModel whose first model call waits for
// ready (nil: no wait).
func runSessionAfter(t testing.TB, endpoint, capsuleName string, turnDelay time.Duration, ready <-chan struct{}) (sessionID, taskID string, stderr string) {
	t.Helper()
	var turn int
	drv := agent.DriverFunc(func(context.Context, []byte) (agent.Result, error) {
		if ready != nil && turn == 0 {
			select {
			case <-ready:
			case <-time.After(time.Minute):
			}
		}
		time.Sleep(turnDelay)
		turn++
		data := `{"text":"done","stop_reason":"end_turn"}`
		if turn == 1 {
			data = `{"text":"","tool_calls":[{"id":"toolu_1","name":"style","input":{}}],"stop_reason":"tool_use"}`
		}
		return agent.Result{Status: agent.StatusPassed, Data: data,
			Metadata: [][2]string{{agent.MetaInputTokens, "10"}, {agent.MetaOutputTokens, "2"}}}, nil
	})
	var errs strings.Builder
	c, inst := capsuletest.Capsule(t, capsuletest.Spec{Name: capsuleName})
	s, err := capsule.OpenParts(context.Background(), capsule.Parts{
		Capsule: c, Installed: inst,
		ManifestDir: t.TempDir(), MurmurHome: t.TempDir(), LaunchTask: "Check the style.", Driver: drv,
		Tools:        []agent.Tool{agent.NewSkill("style", "House style.", "# Style")},
		OtelEndpoint: endpoint, Stderr: &errs,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := s.RunLaunchTask(context.Background(), nil)
	if err := s.Close(out); err != nil || out.Status != agent.ExitOK {
		t.Fatalf("session: %+v %v", out, err)
	}
	return s.ID(), out.TaskID, errs.String()
}

// checkTrace checks one session's spans: one trace, session → task →
// turns → the tool call, with the records' fields as attributes.
func checkTrace(t *testing.T, spans []span, sessionID, taskID string) {
	t.Helper()
	by := map[string][]span{}
	ids := map[string]span{}
	traces := map[string]bool{}
	for _, s := range spans {
		by[s.name] = append(by[s.name], s)
		ids[s.id] = s
		traces[s.trace] = true
	}
	if len(by[otel.SpanSession]) != 1 || len(by[otel.SpanTask]) != 1 || len(by[otel.SpanTurn]) != 2 || len(by["tool_call"]) != 1 || len(traces) != 1 {
		t.Fatalf("spans %v in %d traces; want one trace: session, task, 2 turns, tool_call", names(spans), len(traces))
	}
	sess, task, tool := by[otel.SpanSession][0], by[otel.SpanTask][0], by["tool_call"][0]
	if sess.parent != "" || task.parent != sess.id || ids[tool.parent].name != otel.SpanTurn || ids[tool.parent].attrs["murmur.turn"] != "1" {
		t.Fatalf("parentage: session←%q task←%q tool_call←%q (%s)", sess.parent, task.parent, tool.parent, ids[tool.parent].name)
	}
	for _, turn := range by[otel.SpanTurn] {
		if turn.parent != task.id || turn.attrs["gen_ai.request.model"] != "m" || turn.attrs["murmur.task_id"] != taskID {
			t.Fatalf("turn %v under %q", turn.attrs, turn.parent)
		}
	}
	for k, v := range map[string]string{"murmur.session_id": sessionID, "murmur.exit_status": "ok", "murmur.event": "session_start"} {
		if sess.attrs[k] != v {
			t.Errorf("session %s = %q, want %q", k, sess.attrs[k], v)
		}
	}
	for k, v := range map[string]string{"murmur.tool": "style", "gen_ai.tool.name": "style", "murmur.status": "passed", "murmur.call_id": "toolu_1"} {
		if tool.attrs[k] != v {
			t.Errorf("tool_call %s = %q, want %q", k, tool.attrs[k], v)
		}
	}
	if task.attrs["murmur.origin"] != "cli" || task.attrs["murmur.exit_status"] != "ok" {
		t.Errorf("task attributes %v", task.attrs)
	}
}

func names(spans []span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.name)
	}
	return out
}

func TestSessionExportsOverOTLP(t *testing.T) {
	var mu sync.Mutex
	var spans []span
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					a := map[string]string{}
					for _, kv := range sp.Attributes {
						a[kv.Key] = anyValue(kv.Value)
					}
					for _, kv := range rs.Resource.Attributes {
						a["resource."+kv.Key] = kv.Value.GetStringValue()
					}
					p := ""
					if len(sp.ParentSpanId) > 0 {
						p = hex.EncodeToString(sp.ParentSpanId)
					}
					spans = append(spans, span{name: sp.Name, id: hex.EncodeToString(sp.SpanId), parent: p, trace: hex.EncodeToString(sp.TraceId), attrs: a})
				}
			}
		}
		mu.Unlock()
	}))
	// The session runs once the exporter's probe has connected and closed
	// (it marks the endpoint reached before closing): one that ended
	// before (a loaded machine can delay the probe's goroutine) spools its
	// spans for the next session instead of sending them.
	connected := make(chan struct{})
	var once sync.Once
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			once.Do(func() { close(connected) })
		}
	}
	srv.Start()
	defer srv.Close()
	sessionID, taskID, stderr := runSessionAfter(t, srv.URL, "otel-demo", 0, connected)
	if stderr != "" && strings.Contains(stderr, "OpenTelemetry") {
		t.Fatalf("warned: %s", stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	checkTrace(t, spans, sessionID, taskID)
	if spans[0].attrs["resource.service.name"] != "otel-demo" || spans[0].attrs["resource.service.instance.id"] != sessionID {
		t.Fatalf("resource %v", spans[0].attrs)
	}
}

func anyValue(v *common.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *common.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *common.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return v.String()
}

// TestJaeger sends a real session's spans to a running Jaeger (make
// test-otel-jaeger starts one) and reads them back through its query API.
func TestJaeger(t *testing.T) {
	otlp, query := os.Getenv("MUR_TEST_JAEGER_OTLP"), os.Getenv("MUR_TEST_JAEGER_QUERY")
	if otlp == "" || query == "" {
		t.Skip("MUR_TEST_JAEGER_OTLP and MUR_TEST_JAEGER_QUERY name a running Jaeger (make test-otel-jaeger)")
	}
	// Jaeger may still be starting: wait for its query API.
	for up := time.Now().Add(120 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		resp, err := http.Get(strings.TrimRight(query, "/") + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(up) {
			t.Fatalf("Jaeger's query API at %s did not answer: %v", query, err)
		}
	}
	service := fmt.Sprintf("mur-test-%d", time.Now().UnixNano())
	sessionID, taskID, _ := runSession(t, otlp, service)
	var spans []span
	deadline := time.Now().Add(60 * time.Second)
	for {
		spans = jaegerSpans(t, query, service)
		if len(spans) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	checkTrace(t, spans, sessionID, taskID)
	t.Logf("Jaeger holds %d spans of session %s: %v", len(spans), sessionID, names(spans))
}

// jaegerSpans reads every span of a service through Jaeger's query API
// (GET /api/traces).
func jaegerSpans(t *testing.T, query, service string) []span {
	t.Helper()
	resp, err := http.Get(strings.TrimRight(query, "/") + "/api/traces?limit=20&service=" + url.QueryEscape(service))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Spans []struct {
				TraceID       string `json:"traceID"`
				SpanID        string `json:"spanID"`
				OperationName string `json:"operationName"`
				References    []struct {
					RefType string `json:"refType"`
					SpanID  string `json:"spanID"`
				} `json:"references"`
				Tags []struct {
					Key   string `json:"key"`
					Value any    `json:"value"`
				} `json:"tags"`
			} `json:"spans"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil // the service is not known yet
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var out []span
	for _, tr := range body.Data {
		for _, s := range tr.Spans {
			sp := span{name: s.OperationName, id: s.SpanID, trace: s.TraceID, attrs: map[string]string{}}
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					sp.parent = r.SpanID
				}
			}
			for _, tag := range s.Tags {
				sp.attrs[tag.Key] = fmt.Sprint(tag.Value)
			}
			out = append(out, sp)
		}
	}
	return out
}
