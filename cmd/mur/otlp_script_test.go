package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Script commands for scenarios that read the spans mur exports
// (run_door_trace.txtar):
//
//	otlp start                       serve an OTLP/HTTP trace receiver on loopback; sets $OTLP
//	otlp get VAR trace|span|parent SPAN [KEY=VALUE]...
//	                                 wait up to 20s for a span named SPAN whose attributes
//	                                 match, and set $VAR to its trace id, span id or parent
//	                                 span id (hex)
func init() {
	scriptCmds["otlp"] = cmdOTLP
}

// receivedSpan is one span an OTLP receiver was sent.
type receivedSpan struct {
	name, trace, span, parent string
	attrs                     map[string]string
}

// otlpReceivers holds each script's receiver, by its work directory.
var otlpReceivers sync.Map

type otlpReceiver struct {
	mu    sync.Mutex
	spans []receivedSpan
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				attrs := map[string]string{}
				for _, kv := range s.Attributes {
					attrs[kv.Key] = anyValue(kv.Value)
				}
				o.spans = append(o.spans, receivedSpan{name: s.Name, trace: hex.EncodeToString(s.TraceId),
					span: hex.EncodeToString(s.SpanId), parent: hex.EncodeToString(s.ParentSpanId), attrs: attrs})
			}
		}
	}
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
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

func cmdOTLP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: otlp start | otlp get VAR trace|span|parent SPAN [KEY=VALUE]...")
	}
	key := ts.Getenv("WORK")
	switch args[0] {
	case "start":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		o := &otlpReceiver{}
		srv := &http.Server{Handler: o, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		ts.Defer(func() { _ = srv.Close() })
		otlpReceivers.Store(key, o)
		ts.Setenv("OTLP", "http://"+ln.Addr().String())
	case "get":
		if len(args) < 4 {
			ts.Fatalf("usage: otlp get VAR trace|span|parent SPAN [KEY=VALUE]...")
		}
		v, ok := otlpReceivers.Load(key)
		if !ok {
			ts.Fatalf("otlp get: no receiver; run otlp start first")
		}
		o := v.(*otlpReceiver)
		deadline := time.Now().Add(20 * time.Second)
		for {
			o.mu.Lock()
			var hit *receivedSpan
			for i := range o.spans {
				s := &o.spans[i]
				if s.name != args[3] {
					continue
				}
				match := true
				for _, cond := range args[4:] {
					k, want, _ := strings.Cut(cond, "=")
					match = match && s.attrs[k] == want
				}
				if match {
					hit = s
					break
				}
			}
			o.mu.Unlock()
			if hit != nil {
				val := map[string]string{"trace": hit.trace, "span": hit.span, "parent": hit.parent}[args[2]]
				if val == "" && args[2] != "parent" {
					ts.Fatalf("otlp get: want trace, span or parent, not %q", args[2])
				}
				ts.Setenv(args[1], val)
				fmt.Fprintf(ts.Stdout(), "%s %s\n", args[2], val)
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("otlp get: no %s span matching %v after 20s", args[3], args[4:])
			}
			time.Sleep(50 * time.Millisecond)
		}
	default:
		ts.Fatalf("otlp: unknown verb %q", args[0])
	}
}
