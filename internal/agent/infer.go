package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/murmur/mur/internal/spend"
	"github.com/murmur/mur/internal/tokens"
)

// turn makes one counted inference call and appends the reply to the
// conversation. A non-nil Outcome ends the task.
func (l *Loop) turn(ctx context.Context, t *task) (Response, *Outcome) {
	if o := l.ctxOutcome(ctx, t); o != nil {
		return Response{}, o
	}
	turnNo := t.out.Turns + 1
	choice := l.plan.primary()
	// context.images.keep: older images go as their one line; the
	// conversation keeps their bytes.
	msgs := keepImages(t.conv.msgs, l.plan.imageLimits().Keep)
	req := Request{
		Format: Format, Model: l.plan.Inference.Model, Messages: msgs,
		Tools: nil, MaxTokens: choice.OutputCap, Config: l.plan.DriverConfig, ContextID: t.contextID,
	}
	if l.prompt.Set {
		req.System = l.prompt.Text
	}
	sentFrom := 0
	if l.cont.id != "" && l.cont.contextID == t.contextID && l.cont.acked <= len(t.conv.msgs) {
		sentFrom = l.cont.acked
		req.Messages = msgs[sentFrom:]
		req.ContinuationID = l.cont.id
	}
	data, err := marshalRequest(req, l.toolsJSON)
	if err != nil {
		o := l.fail(t, causeInference, err.Error())
		return Response{}, &o
	}
	// With a spend ceiling in effect the request is measured before it is
	// sent, and admitted by that number; with none, it is measured while
	// the provider answers, so counting never delays the call.
	inputFn := l.measureInput(t)
	line := map[string]any{
		"task_id": t.id, "turn": turnNo, "choice": choice.Choice, "driver": choice.Driver, "model": l.plan.Inference.Model,
		"max_tokens": choice.OutputCap, "messages": len(t.conv.msgs),
	}
	if choice.Budget > 0 {
		line["input_budget"] = choice.Budget
	}
	if req.ContinuationID != "" {
		line["continuation"] = true
		line["messages_sent"] = len(req.Messages)
	}
	if l.recorder.Hashes() {
		if l.systemSHA != "" {
			line["system_sha"] = l.systemSHA
		}
		line["tools_sha"] = l.toolsSHA
		line["message_shas"] = t.conv.shas
	}

	res, f, spent, attempts, stopped, resErr := l.attempts(ctx, t, data, inputFn, line, choice.OutputCap)
	line["input_tokens"] = inputFn()
	// Every attempt's charge is the call's: the spend meters took each
	// failed attempt's as it ended, so the record and the task's totals
	// (and through them the session's and the status line) carry them too.
	t.out.InputTokens += spent.in
	t.out.OutputTokens += spent.out
	if attempts > 1 {
		line["attempts"] = attempts
	}
	if stopped != "" {
		line["retry_stopped"] = stopped
	}
	if resErr != nil {
		// Refused by a spend ceiling (before or between attempts), or a
		// cancel during a wait.
		var ref *spend.Refusal
		if errors.As(resErr, &ref) {
			if f != nil {
				// A retry refused: the call still keeps its record, with
				// what its attempts cost, before the refusal's own lines.
				l.failureLine(line, f, spent)
			}
			return Response{}, l.refused(t, ref)
		}
		if f != nil {
			// A cancel during a wait: the call keeps its record, with what
			// its attempts cost.
			l.failureLine(line, f, spent)
		}
		if o := l.ctxOutcome(ctx, t); o != nil {
			return Response{}, o
		}
		msg, detail := splitLine(resErr.Error())
		if detail != "" {
			msg += l.logDetail(t, turnNo, attempts, detail)
		}
		o := l.fail(t, causeInference, msg)
		return Response{}, &o
	}
	if f != nil {
		l.failureLine(line, f, spent)
		t.out.Turns = turnNo
		if o := l.ctxOutcome(ctx, t); o != nil {
			return Response{}, o
		}
		reason := f.reason() + suffix(attempts, stopped)
		if f.credential {
			t.out.Code = codeCredential
			o := l.fail(t, causeCredential, reason+"; the provider rejected the credential: check the gateway's api_key")
			return Response{}, &o
		}
		o := l.fail(t, causeInference, reason)
		return Response{}, &o
	}
	resp := res.resp
	t.out.Turns = turnNo
	t.out.InputTokens += res.chargedIn
	t.out.OutputTokens += res.chargedOut
	line["output_tokens"] = res.outTokens
	for k, v := range res.actual {
		line[k] = v
	}
	line["charged"] = res.chargedIn + res.chargedOut + spent.total()
	line["stop_reason"] = resp.StopReason
	line["duration_ms"] = res.dur.Milliseconds()
	if l.recorder.Hashes() {
		sha, _ := l.recorder.Hash(res.raw)
		line["response_sha"] = sha
	}
	l.emit("inference", line)

	// Commit the reply. A reply cut at the cap keeps its text only: its
	// tool calls are dropped unrun, so none may stand unanswered.
	msg := Message{Role: RoleAssistant}
	if resp.Text != "" {
		msg.Content = append(msg.Content, Block{Type: BlockText, Text: resp.Text})
	}
	if resp.StopReason != StopMaxTokens {
		for _, c := range resp.ToolCalls {
			msg.Content = append(msg.Content, Block{Type: BlockToolUse, ID: c.ID, Name: c.Name, Input: c.Input})
		}
	}
	if len(msg.Content) == 0 {
		msg.Content = []Block{{Type: BlockText, Text: ""}}
	}
	t.conv.add(msg, l.recorder)
	if res.anchor > 0 {
		t.conv.anchor, t.conv.anchorLen = res.anchor, len(t.conv.msgs)
	}
	if id, ok := res.result.Meta(MetaContinuationID); ok && id != "" {
		l.cont = continuation{id: id, contextID: t.contextID, acked: len(t.conv.msgs)}
	} else {
		l.cont = continuation{contextID: t.contextID}
	}
	return resp, nil
}

// measureInput starts measuring t's next request and returns a function
// that waits for the number. Under a spend ceiling the count is taken at
// once, before anything is sent.
func (l *Loop) measureInput(t *task) func() int64 {
	if len(l.ceilings) > 0 || l.latched() != nil {
		n := l.estimate(t)
		return func() int64 { return n }
	}
	var n int64
	done := make(chan struct{})
	go func() {
		n = l.estimate(t)
		close(done)
	}()
	return func() int64 {
		<-done
		return n
	}
}

// suffix is the failure reason's attempts-and-stop ending.
func suffix(attempts int, stopped string) string {
	switch {
	case stopped != "":
		word := "attempts"
		if attempts == 1 {
			word = "attempt"
		}
		return fmt.Sprintf(" (%d %s; retry stopped: %s)", attempts, word, stopped)
	case attempts > 1:
		return fmt.Sprintf(" (%d attempts)", attempts)
	}
	return ""
}

// marshalRequest renders the request with the session's tool array, which
// is marshalled once per session rather than once per turn.
func marshalRequest(req Request, toolsJSON json.RawMessage) ([]byte, error) {
	type wire struct {
		Request
		Tools json.RawMessage `json:"tools"`
	}
	b, err := json.Marshal(wire{Request: req, Tools: toolsJSON})
	if err != nil {
		return nil, fmt.Errorf("inference request: %w", err)
	}
	return b, nil
}

// success is a passed call, measured.
type success struct {
	resp       Response
	result     Result
	raw        []byte
	dur        time.Duration
	outTokens  int64
	chargedIn  int64
	chargedOut int64
	actual     map[string]any
	anchor     int64
}

// charge is what a call's failed attempts cost, split as the task's
// totals keep it.
type charge struct{ in, out int64 }

func (c charge) total() int64 { return c.in + c.out }

// attempts runs the call, retrying transient failures; outputCap is the
// cap the request sends, which a spend ceiling reserves. It returns the
// success, or the final failure with the attempt count and retry stop, or
// an error for a spend refusal or a cancelled wait, with what the call's
// failed attempts were charged (spent). A refusal of a retry, or a cancel
// during a wait, comes with the failure of the attempt before it, so the
// call still keeps its inference record.
func (l *Loop) attempts(ctx context.Context, t *task, data []byte, inputFn func() int64, line map[string]any, outputCap int64) (*success, *failure, charge, int, string, error) {
	var last *failure
	var spent charge
	for attempt := 0; ; attempt++ {
		need := outputCap
		latch := l.latched()
		if len(l.ceilings) > 0 || latch != nil {
			need += inputFn()
		}
		var res spend.Reservation
		if latch != nil {
			r := *latch
			r.Latched, r.Needed = true, need
			return nil, last, spent, attempt, "", &r
		}
		if len(l.ceilings) > 0 {
			r, err := spend.Admit(need, l.ceilings...)
			if err != nil {
				return nil, last, spent, attempt, "", err
			}
			res = r
		}
		start := l.now()
		out, derr := l.rt.Driver.Run(ctx, data)
		dur := l.now().Sub(start)
		if derr == nil && out.Status == StatusPassed {
			resp, perr := ParseResponse([]byte(out.Data))
			if perr != nil {
				derr = perr
			} else {
				s := measure(out, resp, inputFn())
				s.dur = dur
				if res != nil {
					if err := res.Settle(s.chargedIn + s.chargedOut); err != nil {
						return nil, nil, spent, attempt + 1, "", unrecorded(err)
					}
				}
				return s, nil, spent, attempt + 1, "", nil
			}
		}
		f := classify(out, derr, l.now())
		if f.detail != "" {
			f.logged = l.logDetail(t, line["turn"], attempt+1, f.detail)
		}
		retry, stopped, wait := l.retryDecision(ctx, f, attempt)
		// Charges: an attempt that is retried after failing on a provider
		// status or a broken connection costs nothing; anything else,
		// including the attempt a retry stop ends on, is charged what any
		// failed call is (the provider's report, else the input).
		c := failedCharge(out, inputFn())
		if retry && f.brokeOrStatus {
			c = charge{}
		}
		if res != nil {
			if err := res.Settle(c.total()); err != nil {
				return nil, nil, spent, attempt + 1, "", unrecorded(err)
			}
		}
		spent.in += c.in
		spent.out += c.out
		if !retry {
			return nil, &f, spent, attempt + 1, stopped, nil
		}
		last = &f
		rl := map[string]any{"task_id": t.id, "turn": line["turn"], "attempt": attempt + 1, "wait_ms": wait.Milliseconds(), "error": f.msg, "charged": c.total()}
		if f.status > 0 {
			rl["http_status"] = f.status
		}
		l.emit("inference_retry", rl)
		if err := l.sleep(ctx, wait); err != nil {
			return nil, last, spent, attempt + 1, "", err
		}
	}
}

// unrecorded is a charge a spend ceiling could not record. The task ends
// there: going on would spend tokens the ceiling no longer counts.
func unrecorded(err error) error {
	return fmt.Errorf("the call's charge could not be recorded by the spend ceiling: %w", err)
}

// inferenceLog is the file in the session's logs directory that keeps a
// driver failure's whole text.
const inferenceLog = "inference.log"

// logDetail appends a failure's whole text to logs/inference.log and
// returns the clause that points the one-line reason there; "" when the
// loop has no logs directory or the write failed, so the reason never
// names a log that does not hold the text.
func (l *Loop) logDetail(t *task, turn any, attempt int, detail string) string {
	if l.rt.Logs == "" {
		return ""
	}
	f, err := os.OpenFile(filepath.Join(l.rt.Logs, inferenceLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return ""
	}
	_, werr := fmt.Fprintf(f, "%s task %s turn %v attempt %d: %s\n", l.now().UTC().Format(time.RFC3339), t.id, turn, attempt, strings.TrimRight(detail, "\r\n"))
	if err := errors.Join(werr, f.Close()); err != nil {
		return ""
	}
	return "; the whole text is in logs/" + inferenceLog
}

// failureLine writes a failed call's inference record, charged what all
// its attempts cost.
func (l *Loop) failureLine(line map[string]any, f *failure, spent charge) {
	line["error"] = f.msg
	line["charged"] = spent.total()
	if f.status > 0 {
		line["http_status"] = f.status
	}
	l.emit("inference", line)
}

// retryDecision says whether a failed attempt is retried, and if so after
// what wait; if a transient failure is not retried, why (the retry stop).
func (l *Loop) retryDecision(ctx context.Context, f failure, attempt int) (retry bool, stopped string, wait time.Duration) {
	if !f.transient || ctx.Err() != nil {
		return false, "", 0
	}
	r := l.plan.Inference.Retry
	if int64(attempt) >= *r.MaxRetries {
		return false, StoppedMaxRetries, 0
	}
	l.mu.Lock()
	wait = backoff(r, attempt, l.rand)
	l.mu.Unlock()
	if f.hasRetryAfter {
		if f.retryAfter > time.Duration(*r.MaxDelayMS)*time.Millisecond {
			return false, StoppedRetryAfter, 0
		}
		wait = f.retryAfter
	}
	if !l.deadline.IsZero() && !l.now().Add(wait).Before(l.deadline) {
		return false, StoppedDeadline, 0
	}
	return true, "", wait
}

// failedCharge is what a failed call costs: the provider's request plus
// completion when its error payload reported both, else the estimate of
// the request alone.
func failedCharge(out Result, input int64) charge {
	in, o := out.metaInt(MetaInputTokens), out.metaInt(MetaOutputTokens)
	if in >= 0 && o >= 0 {
		return charge{in: in + max(out.metaInt(MetaCachedTokens), 0) + max(out.metaInt(MetaCacheWriteTokens), 0), out: o}
	}
	return charge{in: input}
}

// measure counts a passed call and decides its charge: the provider's
// counts when it reported both, else the runtime's.
func measure(out Result, resp Response, input int64) *success {
	s := &success{resp: resp, result: out, raw: []byte(out.Data), actual: map[string]any{}}
	s.outTokens = int64(tokens.Count(resp.Text))
	for _, c := range resp.ToolCalls {
		s.outTokens += int64(tokens.Count(c.Name) + tokens.CountBytes(c.Input))
	}
	in, o := out.metaInt(MetaInputTokens), out.metaInt(MetaOutputTokens)
	cached, cw := out.metaInt(MetaCachedTokens), out.metaInt(MetaCacheWriteTokens)
	if in >= 0 {
		s.actual["input_tokens_actual"] = in
	}
	if o >= 0 {
		s.actual["output_tokens_actual"] = o
	}
	if cached >= 0 {
		s.actual["cached_tokens"] = cached
	}
	if cw >= 0 {
		s.actual["cache_write_tokens"] = cw
	}
	if in >= 0 && o >= 0 {
		s.chargedIn = in + max(cached, 0) + max(cw, 0)
		s.chargedOut = o
		s.actual["charge_basis"] = "provider"
		s.anchor = s.chargedIn + o
	} else {
		s.chargedIn, s.chargedOut = input, s.outTokens
		s.actual["charge_basis"] = "runtime"
	}
	return s
}

// refused writes every surface of a spend refusal the loop owns and latches
// the session.
func (l *Loop) refused(t *task, ref *spend.Refusal) *Outcome {
	l.latchRefusal(t.id, ref)
	t.out.Status, t.out.Cause, t.out.Reason, t.out.Code = ExitSpendCeiling, causeSpend, ref.Error(), codeTaskFailed
	return &t.out
}

// latchRefusal latches the session on its first spend refusal and writes
// the refusal's record; a hook's refused run-inference latches it too.
func (l *Loop) latchRefusal(taskID string, ref *spend.Refusal) {
	l.mu.Lock()
	if l.latch == nil {
		l.latch = ref
	}
	l.mu.Unlock()
	if l.session != nil {
		l.session.Latch(ref)
	}
	f := map[string]any{"limit": ref.Limit, "ceiling": ref.Ceiling, "used": ref.Used, "needed": ref.Needed, "latched": ref.Latched}
	if taskID != "" {
		f["task_id"] = taskID
	}
	l.emit("spend_ceiling_reached", f)
}

// latched is the session's first spend refusal, nil before one. An async
// hook's run-inference may latch it while a turn runs, so it is read under
// the loop's lock.
func (l *Loop) latched() *spend.Refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latch
}
