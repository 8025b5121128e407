package agent

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/murmur/mur/internal/manifest"
)

// retry_stopped values on an inference record.
const (
	StoppedMaxRetries = "max_retries"
	StoppedRetryAfter = "retry_after"
	StoppedDeadline   = "deadline"
)

// failure is one failed attempt, classified.
type failure struct {
	msg        string // the provider's error text, or the dispatch error
	status     int    // HTTP status when the driver reported one
	transient  bool
	credential bool
	// brokeOrStatus is true when the attempt failed on a provider status
	// or a connection that broke before a response: a retried attempt of
	// that kind is charged nothing.
	brokeOrStatus bool
	retryAfter    time.Duration
	hasRetryAfter bool
	// detail is the whole failure text when it runs past one line (a
	// WebAssembly trap's backtrace); msg keeps the first line, and logged
	// is the clause that points the reason at the log holding detail.
	detail string
	logged string
}

// reason is the failure text without the attempts suffix.
func (f failure) reason() string {
	if f.status > 0 {
		return "HTTP " + strconv.Itoa(f.status) + ": " + f.msg + f.logged
	}
	return f.msg + f.logged
}

// classify applies the spec's transient rules, in order.
func classify(res Result, dispatchErr error, now time.Time) failure {
	if dispatchErr != nil {
		f := failure{msg: "driver call failed: " + dispatchErr.Error()}
		f.msg, f.detail = splitLine(f.msg)
		return f
	}
	f := failure{}
	f.msg, f.detail = splitLine(res.Summary)
	if f.msg == "" {
		f.msg = "driver reported status " + string(res.Status)
	}
	if n := res.metaInt(MetaHTTPStatus); n > 0 {
		f.status = int(n)
	}
	kind, _ := res.Meta(MetaFailure)
	f.retryAfter, f.hasRetryAfter = retryAfter(res, now)
	tr, hasTr := res.Meta(MetaTransient)
	switch {
	case f.status == http.StatusUnauthorized || kind == FailureCredential:
		f.credential = true
	case hasTr && tr == "false":
	case hasTr && tr == "true":
		f.transient = true
	case kind == FailureConnectionBroken:
		f.transient = true
	case f.status == 408 || f.status == 429 || (f.status >= 500 && f.status <= 599 && f.status != 501 && f.status != 505):
		f.transient = true
	}
	// What a retried attempt costs depends on what it failed on, not on
	// which rule found it transient: a driver that also says transient
	// "true" for a 503 still failed on a provider status.
	f.brokeOrStatus = f.status > 0 || kind == FailureConnectionBroken
	return f
}

// splitLine splits a failure text into its first line, which the task's
// reason, the status line and out/result.txt carry, and the whole text
// when there is more than that line (else "").
func splitLine(s string) (string, string) {
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, ""
	}
	if strings.TrimSpace(s[i:]) == "" {
		return s[:i], ""
	}
	return strings.TrimRight(s[:i], " \t:"), s
}

// retryAfter reads retry-after-ms, then retry-after (seconds or HTTP date).
func retryAfter(res Result, now time.Time) (time.Duration, bool) {
	if v, ok := res.Meta(MetaRetryAfterMs); ok {
		if d, ok := ParseRetryAfterMs(v); ok {
			return d, true
		}
	}
	if v, ok := res.Meta(MetaRetryAfter); ok {
		return ParseRetryAfter(v, now)
	}
	return 0, false
}

// ParseRetryAfterMs parses a retry-after-ms header value.
func ParseRetryAfterMs(v string) (time.Duration, bool) {
	ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || ms < 0 || ms != ms {
		return 0, false
	}
	// Any wait this long is past every max_delay_ms; clamp rather than
	// overflow into a negative duration.
	if ms > 1e12 {
		ms = 1e12
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// ParseRetryAfter parses a Retry-After value: delay seconds or an HTTP
// date, relative to now. A date in the past means no wait.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 || secs > 1<<32 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	return d, true
}

// backoff is the wait before retry k (from 0): uniform in [d/2, d] with
// d = min(max_delay_ms, initial_delay_ms × 2^k), from the effective
// inference.retry.
func backoff(r *manifest.Retry, k int, rnd *rand.Rand) time.Duration {
	d, most := *r.InitialDelayMS, *r.MaxDelayMS
	for i := 0; i < k && d < most; i++ {
		d *= 2
	}
	if d > most {
		d = most
	}
	full := time.Duration(d) * time.Millisecond
	half := full / 2
	return half + time.Duration(rnd.Int64N(int64(full-half)+1))
}
