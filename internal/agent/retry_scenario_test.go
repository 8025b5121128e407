package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/providertest"
)

func fail(status int, msg string, hdr ...string) providertest.Step {
	s := providertest.Step{Status: status, Body: providertest.ErrorBody(msg)}
	if len(hdr) == 2 {
		s.Header = map[string]string{hdr[0]: hdr[1]}
	}
	return s
}

func TestRetryClasses(t *testing.T) {
	tests := []struct {
		name     string
		steps    []providertest.Step
		retry    [3]int64 // max_retries, initial, max delay
		deadline time.Duration
		exit     int
		requests int
		reason   string // suffix of the failure reason, "" for success
		stopped  string
		waits    []time.Duration // exact waits; nil checks none
	}{
		{name: "503 then ok", steps: []providertest.Step{fail(503, "overloaded"), fail(503, "overloaded"), {Text: "ok"}},
			retry: [3]int64{6, 1000, 60000}, exit: 0, requests: 3},
		{name: "429 retry-after-ms is exact", steps: []providertest.Step{fail(429, "slow down", "retry-after-ms", "1500"), {Text: "ok"}},
			retry: [3]int64{6, 1000, 60000}, exit: 0, requests: 2, waits: []time.Duration{1500 * time.Millisecond}},
		{name: "retry-after seconds", steps: []providertest.Step{fail(408, "timeout", "retry-after", "2"), {Text: "ok"}},
			retry: [3]int64{6, 1000, 60000}, exit: 0, requests: 2, waits: []time.Duration{2 * time.Second}},
		{name: "dropped connection", steps: []providertest.Step{{Drop: true}, {Text: "ok"}},
			retry: [3]int64{6, 1000, 60000}, exit: 0, requests: 2},
		{name: "max_retries", steps: []providertest.Step{fail(503, "down"), fail(503, "down"), fail(503, "down")},
			retry: [3]int64{2, 10, 100}, exit: 1, requests: 3, reason: "HTTP 503: down (3 attempts; retry stopped: max_retries)", stopped: "max_retries"},
		{name: "retry-after past max_delay", steps: []providertest.Step{fail(429, "later", "retry-after", "120")},
			retry: [3]int64{6, 1000, 60000}, exit: 1, requests: 1, reason: "HTTP 429: later (1 attempt; retry stopped: retry_after)", stopped: "retry_after"},
		{name: "wait past deadline", steps: []providertest.Step{fail(429, "later", "retry-after-ms", "30000")},
			retry: [3]int64{6, 1000, 60000}, deadline: 20 * time.Second, exit: 1, requests: 1, reason: "HTTP 429: later (1 attempt; retry stopped: deadline)", stopped: "deadline"},
		{name: "400 not retried", steps: []providertest.Step{fail(400, "bad request")},
			retry: [3]int64{6, 1000, 60000}, exit: 1, requests: 1, reason: "HTTP 400: bad request"},
		{name: "501 not retried", steps: []providertest.Step{fail(501, "nope")},
			retry: [3]int64{6, 1000, 60000}, exit: 1, requests: 1, reason: "HTTP 501: nope"},
		{name: "retried then not transient", steps: []providertest.Step{fail(500, "oops"), fail(400, "bad")},
			retry: [3]int64{6, 1000, 60000}, exit: 1, requests: 2, reason: "HTTP 400: bad (2 attempts)"},
		{name: "max_retries 0 disables", steps: []providertest.Step{fail(503, "down")},
			retry: [3]int64{0, 1000, 60000}, exit: 1, requests: 1, reason: "HTTP 503: down (1 attempt; retry stopped: max_retries)", stopped: "max_retries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRun(t, providertest.Anthropic, tt.steps...)
			r.opts.Capsule.Inference.Retry.MaxRetries = ptr(tt.retry[0])
			r.opts.Capsule.Inference.Retry.InitialDelayMS = ptr(tt.retry[1])
			r.opts.Capsule.Inference.Retry.MaxDelayMS = ptr(tt.retry[2])
			r.opts.Deadline = tt.deadline
			r.launch()
			r.wantCode(tt.exit)
			if n := len(r.srv.Requests()); n != tt.requests {
				t.Fatalf("%d requests, want %d", n, tt.requests)
			}
			retries := r.lines("inference_retry")
			if len(retries) != len(r.waits) || len(retries) != tt.requests-1 {
				t.Fatalf("%d inference_retry lines, %d waits", len(retries), len(r.waits))
			}
			inf := r.lines("inference")
			if len(inf) != 1 {
				t.Fatalf("%d inference lines: one call keeps one record", len(inf))
			}
			if tt.requests > 1 && inf[0].Int("attempts") != int64(tt.requests) {
				t.Fatalf("attempts %d", inf[0].Int("attempts"))
			}
			if _, ok := inf[0].Fields["charged"]; !ok {
				t.Fatalf("inference line has no charged: %v", inf[0].Fields)
			}
			// A call that ends failed is charged its input alone; only an
			// attempt that is retried after a provider status costs
			// nothing, and a retry stop means the last one was not.
			if tt.exit != 0 && inf[0].Int("charged") != inf[0].Int("input_tokens") {
				t.Fatalf("failed call charged %d, want its input %d", inf[0].Int("charged"), inf[0].Int("input_tokens"))
			}
			if inf[0].String("retry_stopped") != tt.stopped {
				t.Fatalf("retry_stopped %q", inf[0].String("retry_stopped"))
			}
			if tt.reason != "" {
				r.wantStderr("E-RUN-040", tt.reason)
				if got := r.result(); got != "failed: "+tt.reason+"\n" {
					t.Fatalf("result.txt %q", got)
				}
				if f := r.lines("task_failed")[0]; f.String("reason") != tt.reason {
					t.Fatalf("task_failed reason %q", f.String("reason"))
				}
			} else if r.result() != "ok" {
				t.Fatalf("result %q: a failed attempt leaked", r.result())
			}
			if tt.waits != nil {
				for i, w := range tt.waits {
					if r.waits[i] != w {
						t.Fatalf("wait %d = %v, want %v", i, r.waits[i], w)
					}
				}
			}
			if tt.exit == 0 && tt.requests > 1 {
				// Nothing from a failed attempt reached the conversation:
				// the successful request carries the same messages.
				first, last := r.srv.Requests()[0], r.srv.Requests()[tt.requests-1]
				if string(first.Raw) != string(last.Raw) {
					t.Fatalf("retry changed the request:\n%s\n%s", first.Raw, last.Raw)
				}
			}
		})
	}
}

func TestBackoffJitterBounds(t *testing.T) {
	steps := []providertest.Step{}
	for i := 0; i < 5; i++ {
		steps = append(steps, fail(503, "down"))
	}
	steps = append(steps, providertest.Step{Text: "ok"})
	r := newRun(t, providertest.OpenAI, steps...)
	r.opts.Capsule.Inference.Retry.InitialDelayMS, r.opts.Capsule.Inference.Retry.MaxDelayMS = ptr[int64](1000), ptr[int64](5000)
	r.launch()
	r.wantCode(0)
	for k, w := range r.waits {
		d := time.Duration(min(5000, 1000<<k)) * time.Millisecond
		if w < d/2 || w > d {
			t.Fatalf("wait %d = %v outside [%v, %v]", k, w, d/2, d)
		}
	}
}

func TestCredentialRejected(t *testing.T) {
	r := newRun(t, providertest.Anthropic, fail(401, "invalid x-api-key"), providertest.Step{Text: "never"})
	r.launch()
	r.wantCode(1)
	r.wantStderr("E-RUN-027", "HTTP 401: invalid x-api-key")
	if len(r.srv.Requests()) != 1 {
		t.Fatal("a rejected credential was retried")
	}
	if f := r.lines("task_failed")[0]; f.String("code") != "E-RUN-027" || f.String("cause") != "credential_rejected" {
		t.Fatalf("task_failed %v", f.Fields)
	}
	if !strings.HasPrefix(r.result(), "failed: HTTP 401") {
		t.Fatalf("result %q", r.result())
	}
	if h := r.srv.Requests()[0].Header.Get("x-api-key"); h != "sk-test" {
		t.Fatalf("key header %q", h)
	}
}

func TestRefusedConnectionNotRetried(t *testing.T) {
	r := newRun(t, providertest.Anthropic)
	r.opts.Driver.(*providertest.Driver).Endpoint = "http://127.0.0.1:9"
	r.launch()
	r.wantCode(1)
	if len(r.waits) != 0 {
		t.Fatal("a refused connection was retried")
	}
}
