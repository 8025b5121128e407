package door

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/lifecycle"
	"github.com/murmur/mur/internal/manifest"
)

// post sends one raw JSON-RPC body with A2A-Version 1.0 unless headers
// override it, and returns the status and the decoded envelope.
func post(t *testing.T, d *Door, body string, headers map[string]string) (int, rpcEnvelope, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.URL()+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var env rpcEnvelope
	_ = json.Unmarshal(raw, &env)
	return resp.StatusCode, env, raw
}

func code(env rpcEnvelope) int {
	if env.Error == nil {
		return 0
	}
	return env.Error.Code
}

const sendBody = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"echo hi"}]}}}`

func TestBadInput(t *testing.T) {
	f := open(t, queueSleep, func(c *Config) { c.MaxBodyBytes = 4096 })
	for _, tc := range []struct {
		name    string
		body    string
		headers map[string]string
		status  int
		code    int
	}{
		{name: "not JSON", body: `{"jsonrpc":"2.0",`, status: 200, code: codeParseError},
		{name: "invalid UTF-8", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"x\":\"\xff\xfe\"}}", status: 200, code: codeParseError},
		{name: "array body", body: `[1,2]`, status: 200, code: codeInvalidRequest},
		{name: "method is a number", body: `{"jsonrpc":"2.0","id":1,"method":7}`, status: 200, code: codeInvalidRequest},
		{name: "no jsonrpc version", body: `{"id":1,"method":"GetTask","params":{"id":"x"}}`, status: 200, code: codeInvalidRequest},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":1,"method":"Teleport","params":{}}`, status: 200, code: codeMethodNotFound},
		{name: "0.3 method name", body: `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, status: 200, code: codeMethodNotFound},
		{name: "params of the wrong type", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":42}}`, status: 200, code: codeInvalidParams},
		{name: "message without parts", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}`, status: 200, code: codeInvalidParams},
		{name: "unknown task", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, status: 200, code: -32001},
		{name: "oversize body", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"pad":"` + strings.Repeat("x", 8192) + `"}}`, status: 413, code: codeInvalidRequest},
		{name: "no A2A-Version means 0.3", body: sendBody, headers: map[string]string{"A2A-Version": ""}, status: 200, code: codeVersionNotSupported},
		{name: "A2A-Version 2.0", body: sendBody, headers: map[string]string{"A2A-Version": "2.0"}, status: 200, code: codeVersionNotSupported},
		{name: "A2A-Version 1.0.3 is 1.0", body: sendBody, headers: map[string]string{"A2A-Version": "1.0.3"}, status: 200, code: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, env, raw := post(t, f.door, tc.body, tc.headers)
			if status != tc.status || code(env) != tc.code {
				t.Fatalf("status %d code %d (%s), want %d and %d", status, code(env), raw, tc.status, tc.code)
			}
		})
	}
	// The door still serves after all of that.
	if status, env, _ := post(t, f.door, sendBody, nil); status != 200 || env.Error != nil {
		t.Fatalf("door broken after bad input: %d %+v", status, env.Error)
	}
}

func TestAuthentication(t *testing.T) {
	auth, err := MintAuth(&manifest.Authentication{Scheme: "bearer", Credentials: map[string]*manifest.Credential{
		"watcher": {Scopes: []string{"GetTask", "murmur.WatchSession"}},
		"sender":  {Scopes: []string{"SendMessage", "GetTask", "ListTasks", "CancelTask"}},
		"other":   {Scopes: []string{"SendMessage", "GetTask", "ListTasks"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f := open(t, queueSleep, func(c *Config) { c.Auth = auth })
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	for name, h := range map[string]map[string]string{
		"no token":      nil,
		"unknown token": bearer("mur_forged"),
		"basic auth":    {"Authorization": "Basic " + auth.Operator},
	} {
		status, env, _ := post(t, f.door, sendBody, h)
		if status != http.StatusUnauthorized || code(env) != codeUnauthenticated {
			t.Fatalf("%s: status %d code %d, want 401", name, status, code(env))
		}
	}
	// A token check comes before the peer refusal.
	if status, _, _ := post(t, f.door, sendBody, map[string]string{OriginHeader: "peer"}); status != http.StatusUnauthorized {
		t.Fatalf("peer without a token: %d, want 401", status)
	}
	// The card is public and names the scheme.
	resp, err := http.Get(f.door.URL() + CardPath)
	if err != nil {
		t.Fatal(err)
	}
	var card a2a.AgentCard
	decode(t, resp, &card)
	resp.Body.Close()
	if _, ok := card.SecuritySchemes[bearerScheme]; !ok || len(card.SecurityRequirements) != 1 {
		t.Fatalf("card security %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
	}

	// Scopes: watcher may not send.
	status, env, _ := post(t, f.door, sendBody, bearer(auth.Credentials["watcher"].Token))
	if status != http.StatusForbidden || code(env) != codeUnauthorized || !strings.Contains(env.Error.Message, "SendMessage") {
		t.Fatalf("watcher SendMessage: %d %+v", status, env.Error)
	}
	// Who sees which task.
	c := client(t, f.door, bearer(auth.Credentials["sender"].Token))
	mine := send(t, c, text("echo mine"))
	other := client(t, f.door, bearer(auth.Credentials["other"].Token))
	if _, err := other.GetTask(context.Background(), &a2a.GetTaskRequest{ID: mine.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("another credential read the task: %v", err)
	}
	list, err := other.ListTasks(context.Background(), &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 0 {
		t.Fatalf("another credential listed %v (%v)", list, err)
	}
	op := client(t, f.door, bearer(auth.Operator))
	if got, err := op.GetTask(context.Background(), &a2a.GetTaskRequest{ID: mine.ID}); err != nil || got.ID != mine.ID {
		t.Fatalf("operator could not read the task: %v", err)
	}
	list, err = c.ListTasks(context.Background(), &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 1 {
		t.Fatalf("the starting credential listed %d tasks (%v)", len(list.Tasks), err)
	}
	// The operator can cancel a credential's task.
	held := send(t, c, immediately("hold"))
	<-f.backend.started
	<-f.backend.started
	if got, err := op.CancelTask(context.Background(), &a2a.CancelTaskRequest{ID: held.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("operator cancel: %v %v", got, err)
	}
	// Push notifications are not offered, to the operator either.
	status, env, _ = post(t, f.door, `{"jsonrpc":"2.0","id":4,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"x","url":"http://127.0.0.1:9/"}}`, bearer(auth.Operator))
	if code(env) != -32003 {
		t.Fatalf("push config: %d %+v, want -32003", status, env.Error)
	}
	// GetExtendedAgentCard takes no scope.
	status, env, _ = post(t, f.door, `{"jsonrpc":"2.0","id":3,"method":"GetExtendedAgentCard","params":{}}`, bearer(auth.Credentials["watcher"].Token))
	if status != 200 || env.Error != nil {
		t.Fatalf("extended card: %d %+v", status, env.Error)
	}
}

func TestPeerRefusal(t *testing.T) {
	f := open(t, queueSleep, nil)
	peer := map[string]string{OriginHeader: "peer"}
	var bodies []string
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, "/", sendBody},
		{http.MethodPost, "/", `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"x"}}`},
		{http.MethodPost, "/", `not json`},
		{http.MethodGet, "/anything/else", ``},
		{http.MethodPut, "/", ``},
	} {
		req, _ := http.NewRequest(tc.method, f.door.URL()+tc.path, strings.NewReader(tc.body))
		for k, v := range peer {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("WWW-Authenticate") != "" || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %d %v", tc.method, tc.path, resp.StatusCode, resp.Header)
		}
		bodies = append(bodies, string(raw))
	}
	for _, b := range bodies {
		if b != peerRefusal {
			t.Fatalf("peer refusal body %q, want %q", b, peerRefusal)
		}
	}
	// The card is always served.
	req, _ := http.NewRequest(http.MethodGet, f.door.URL()+CardPath, nil)
	req.Header.Set(OriginHeader, "peer")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("card to a peer: %v %v", resp, err)
	}
	resp.Body.Close()
	// Other origins are not governed by peer_tasks.
	if status, env, _ := post(t, f.door, sendBody, map[string]string{OriginHeader: "someone"}); status != 200 || env.Error != nil {
		t.Fatalf("other origin: %d %+v", status, env.Error)
	}
}

func TestPeerAccepted(t *testing.T) {
	f := open(t, queueSleep, func(c *Config) { c.PeerTasks = true })
	c := client(t, f.door, map[string]string{OriginHeader: "peer"})
	task := send(t, c, text("echo from a peer"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("peer task %v", task.Status.State)
	}
}

func TestAcceptanceNone(t *testing.T) {
	f := open(t, lifecycle.Policy{Acceptance: lifecycle.AcceptNone, AfterTask: lifecycle.AfterExit, QueueDepth: 1}, nil)
	for method, want := range map[string]int{"SendMessage": codeMethodNotFound, "SendStreamingMessage": codeUnsupportedOp, "SubscribeToTask": codeUnsupportedOp} {
		body := strings.Replace(sendBody, "SendMessage", method, 1)
		if _, env, _ := post(t, f.door, body, nil); code(env) != want {
			t.Fatalf("%s under none: code %d, want %d", method, code(env), want)
		}
	}
}

func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := int64(ln.Addr().(*net.TCPAddr).Port)
	d, err := New(Config{Queue: lifecycle.New(queueSleep, false), Backend: newDouble()})
	if err != nil {
		t.Fatal(err)
	}
	err = d.ListenPort(&port)
	var dg diag.Diagnostic
	if !errors.As(err, &dg) || dg.Code != diag.RunPortInUse || dg.Field != "network.internal_port" {
		t.Fatalf("err %v, want E-RUN-010 on network.internal_port", err)
	}
}

// TestStalledClients: a client that sends half a body and stops is cut off
// by the read timeout; the door keeps serving others meanwhile.
func TestStalledClients(t *testing.T) {
	f := open(t, queueSleep, func(c *Config) {
		c.ReadTimeout = 200 * time.Millisecond
		c.WriteTimeout = 200 * time.Millisecond
	})
	addr := strings.TrimPrefix(f.door.URL(), "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nA2A-Version: 1.0\r\n\r\n{\"jsonrpc\":")
	// The door closes the connection; a door that waited on would leave
	// this read to the client's own (much longer) deadline.
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.ReadAll(conn); err != nil {
		t.Fatalf("stalled body: %v (the door should close the connection)", err)
	}
	if status, env, _ := post(t, f.door, sendBody, nil); status != 200 || env.Error != nil {
		t.Fatalf("door after a stalled client: %d %+v", status, env.Error)
	}
}

// TestDisconnectMidStream: a client that drops a stream costs only the
// stream: the task runs on and finishes, and no goroutine is left behind.
func TestDisconnectMidStream(t *testing.T) {
	f := open(t, queueSleep, nil)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	body := strings.Replace(strings.Replace(sendBody, "SendMessage", "SendStreamingMessage", 1), "echo hi", "hold", 1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.door.URL()+"/", strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	var line string
	for err == nil && !strings.HasPrefix(line, "data: ") {
		line, err = br.ReadString('\n')
	}
	if err != nil {
		t.Fatalf("first SSE line %q %v", line, err)
	}
	var first struct {
		Result struct {
			Task a2a.Task `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &first); err != nil {
		t.Fatal(err)
	}
	<-f.backend.started
	cancel()
	resp.Body.Close()
	f.backend.release <- struct{}{}
	c := client(t, f.door, nil)
	waitState(t, c, first.Result.Task.ID, a2a.TaskStateCompleted)
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(60 * time.Second)
	for runtime.NumGoroutine() > before+2 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after the stream ended, %d before\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestThousandSends: a thousand concurrent SendMessage calls on a queue of
// depth 2 whose backend holds every task. Exactly one runs and two wait;
// the other 997 are answered REJECTED; none is lost or run twice.
func TestThousandSends(t *testing.T) {
	f := open(t, queueSleep, nil)
	const n = 1000
	var wg sync.WaitGroup
	var mu sync.Mutex
	states := map[a2a.TaskState]int{}
	ids := map[a2a.TaskID]bool{}
	tr := &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}
	hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	defer tr.CloseIdleConnections()
	var failures []string
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"hold"}]},"configuration":{"returnImmediately":true}}}`, i, i)
			req, _ := http.NewRequest(http.MethodPost, f.door.URL()+"/", strings.NewReader(body))
			req.Header.Set("A2A-Version", "1.0")
			resp, err := hc.Do(req)
			if err != nil {
				mu.Lock()
				failures = append(failures, err.Error())
				mu.Unlock()
				return
			}
			defer resp.Body.Close()
			var env struct {
				Result struct {
					Task a2a.Task `json:"task"`
				} `json:"result"`
				Error *rpcError `json:"error"`
			}
			raw, _ := io.ReadAll(resp.Body)
			mu.Lock()
			defer mu.Unlock()
			if err := json.Unmarshal(raw, &env); err != nil || env.Error != nil {
				failures = append(failures, string(raw))
				return
			}
			states[env.Result.Task.Status.State]++
			if ids[env.Result.Task.ID] {
				failures = append(failures, "duplicate task id "+string(env.Result.Task.ID))
			}
			ids[env.Result.Task.ID] = true
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d calls failed, first: %s", len(failures), failures[0])
	}
	accepted := n - states[a2a.TaskStateRejected]
	if accepted != 3 || states[a2a.TaskStateRejected] != n-3 {
		t.Fatalf("states %v: want 3 accepted (one running, queue_depth 2 waiting), %d rejected", states, n-3)
	}
	if len(ids) != n {
		t.Fatalf("%d distinct tasks for %d calls", len(ids), n)
	}
	// Release all three: each runs exactly once.
	for range 3 {
		f.backend.release <- struct{}{}
	}
	deadline := time.Now().Add(20 * time.Second)
	for f.queue.Taken() < 3 || f.queue.Running() != "" {
		if time.Now().After(deadline) {
			t.Fatalf("taken %d running %q", f.queue.Taken(), f.queue.Running())
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.backend.mu.Lock()
	defer f.backend.mu.Unlock()
	if len(f.backend.runs) != 3 {
		t.Fatalf("%d tasks ran, want 3", len(f.backend.runs))
	}
	for id, c := range f.backend.runs {
		if c != 1 {
			t.Fatalf("task %s ran %d times", id, c)
		}
	}
	if got := len(f.backend.records); got != 3 {
		t.Fatalf("%d records, want 3 a2a_task_received (refused tasks leave none)", got)
	}
}

func TestWatchAndStopSession(t *testing.T) {
	stopped := make(chan struct{})
	f := open(t, queueSleep, func(c *Config) { c.OnStop = func() { close(stopped) } })
	// Watch.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.door.URL()+"/", strings.NewReader(`{"jsonrpc":"2.0","id":"w","method":"murmur.WatchSession"}`))
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data: ") {
				lines <- l
			}
		}
		close(lines)
	}()
	c := client(t, f.door, nil)
	done := send(t, c, text("echo watched"))
	sawCompleted := false
	timeout := time.After(10 * time.Second)
	for !sawCompleted {
		select {
		case l := <-lines:
			if strings.Contains(l, string(done.ID)) && strings.Contains(l, "TASK_STATE_COMPLETED") {
				sawCompleted = true
			}
		case <-timeout:
			t.Fatal("the watch stream never showed the task complete")
		}
	}
	// Stop.
	held := send(t, c, immediately("hold"))
	<-f.backend.started
	<-f.backend.started
	queued := send(t, c, immediately("echo queued"))
	status, env, raw := post(t, f.door, `{"jsonrpc":"2.0","id":5,"method":"murmur.StopSession"}`, nil)
	if status != 200 || env.Error != nil {
		t.Fatalf("stop: %d %s", status, raw)
	}
	var res Residue
	if err := json.Unmarshal(env.Result, &res); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Canceled) != fmt.Sprint([]string{string(held.ID)}) || fmt.Sprint(res.Rejected) != fmt.Sprint([]string{string(queued.ID)}) {
		t.Fatalf("residue %+v", res)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("OnStop not called")
	}
	waitState(t, c, held.ID, a2a.TaskStateCanceled)
	waitState(t, c, queued.ID, a2a.TaskStateRejected)
	_ = bytes.MinRead
}
