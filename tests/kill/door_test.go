package kill

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/providertest"
)

// doorKills: mur runs killed with -9 while their door is open and a door
// task runs.
const doorKills = 12

// killDoor kills a mur run that serves its door (queue + sleep on a fixed
// port) at random moments of a task that arrived over A2A and runs the
// same steps as killRun (a WASM tool, a sandboxed command): nothing of the
// session may survive, its records must read whole, mur ps must list
// nothing and the registration file must be gone, the port must be free,
// and the next session on the same port must take a task to its end.
func killDoor(f *fixture) {
	t := f.t
	dir := filepath.Join(f.root, "door")
	roles := map[string]string{"murmur/driver-openai": "driver", "murmur/file-go": "tool"}
	f.publishComponents()
	serve := func() *providertest.Server {
		srv, err := providertest.Serve(runSteps()...)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "murmur.yaml"), fmt.Sprintf(runCapsule, srv.URL))
		return srv
	}
	srv := serve()
	srv.Close()
	f.must(dir, "install")
	port := freePort(t)
	addr := "127.0.0.1:" + port
	start := func() (*os.Process, chan error) {
		c := f.command(dir, "run", "--bind", addr, "--lifecycle-task-acceptance", "queue", "--lifecycle-after-task", "sleep")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		waitDoor(f, addr, done)
		return c.Process, done
	}
	for landed := 0; landed < doorKills; {
		srv := serve()
		p, done := start()
		sendTask(f, addr, true)
		time.Sleep(time.Duration(f.rng.Int64N(int64(2500 * time.Millisecond))))
		ws := watchersOf(p.Pid)
		if err := p.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-done
		ws = append(ws, watchersOf(p.Pid)...)
		srv.Close()
		f.kills++
		landed++
		what := fmt.Sprintf("door kill %d", landed)
		f.settle(p.Pid, ws, what)
		f.checkRecords(dir, what)
		f.checkProject(dir, roles, what)
		// The registration of a killed mur is never listed, and the first
		// look removes it.
		if out, _ := f.must(dir, "ps", "--json"); strings.TrimSpace(out) != "[]" {
			t.Fatalf("%s: mur ps lists the killed session:\n%s", what, out)
		}
		if regs, _ := filepath.Glob(filepath.Join(f.murmurDir(), "run", "*")); len(regs) != 0 {
			t.Fatalf("%s: registration files remain: %v", what, regs)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s: the door's port is still held: %v", what, err)
		}
		ln.Close()
	}
	// The next session on the same port takes a task to its end, and
	// SIGTERM ends it cleanly.
	srv = serve()
	defer srv.Close()
	p, done := start()
	if state := sendTask(f, addr, false); state != "TASK_STATE_COMPLETED" {
		t.Fatalf("after the kills, a task ended %s", state)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the last session ended with %v", err)
	}
	if ids := f.checkRecords(dir, "the last door session"); len(ids) > 3 {
		t.Fatalf("retention kept %d sessions, want at most 3", len(ids))
	}
}

func freePort(t interface{ Fatal(...any) }) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// waitDoor waits until the door at addr serves its card.
func waitDoor(f *fixture, addr string, exited chan error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + door.CardPath)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-exited:
			f.t.Fatalf("mur run exited before its door opened: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("no door at %s after 60 s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sendTask sends one SendMessage and returns the state the door answered.
func sendTask(f *fixture, addr string, immediately bool) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}` +
		map[bool]string{true: `,"configuration":{"returnImmediately":true}`, false: ""}[immediately] + `}}`
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", door.SupportedVersion)
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, s := range []string{"TASK_STATE_COMPLETED", "TASK_STATE_WORKING", "TASK_STATE_SUBMITTED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED"} {
		if strings.Contains(string(b), s) {
			return s
		}
	}
	f.t.Fatalf("SendMessage answered %d %s", resp.StatusCode, b)
	return ""
}
