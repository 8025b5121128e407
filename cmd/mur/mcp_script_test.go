package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/murmur/mur/internal/mcp"
)

// Script commands for mur mcp (mcp_*.txtar):
//
//	mcpc stdio|http OP...   start mur mcp in the current directory (over
//	                        stdio, or --http 127.0.0.1:0 with the token it
//	                        prints), connect the Go SDK's client and run
//	                        each OP in order, printing what it got:
//	  list                  each tool's name, one a line
//	  call NAME JSON        "error: BOOL", the result's text, and
//	                        "code: CODE" when _meta carries one
//	  callerr NAME JSON     the call must fail with a JSON-RPC error:
//	                        "rpcerror: MESSAGE"
//	  notoken               (http) a POST without the token: "status: N" and the body
//
// The server is then ended (stdin closed, or SIGINT) and must exit 0.
func init() {
	scriptCmds["mcpc"] = cmdMCPClient
}

func cmdMCPClient(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || (args[0] != "stdio" && args[0] != "http") {
		ts.Fatalf("usage: mcpc stdio|http OP...")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := murCmd(ts, "mcp")
	var (
		transport sdk.Transport
		url       string
		stderr    strings.Builder
		wait      func() error
	)
	if args[0] == "stdio" {
		cmd.Stderr = &stderr
		ct := &sdk.CommandTransport{Command: cmd}
		transport = ct
		wait = func() error { return nil }
	} else {
		cmd.Args = append(cmd.Args, "--http", "127.0.0.1:0")
		// stderr goes to a file the script polls: no goroutine to copy it.
		errPath := ts.MkAbs("mcp-http.stderr")
		f, err := os.Create(errPath)
		ts.Check(err)
		defer f.Close()
		cmd.Stderr = f
		ts.Check(cmd.Start())
		var token string
		url, token = waitServing(ts, errPath)
		transport = &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}
		wait = func() error {
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			b, _ := os.ReadFile(errPath)
			stderr.Write(b)
			return err
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "mcpc", Version: "1"}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		wait()
		ts.Fatalf("mcpc: connect: %v\nmur mcp stderr:\n%s", err, stderr.String())
	}
	out := ts.Stdout()
	if info := cs.InitializeResult().ServerInfo; info != nil {
		fmt.Fprintf(out, "server: %s %s\n", info.Name, info.Version)
	}
	ops := args[1:]
	for len(ops) > 0 {
		switch op := ops[0]; op {
		case "list":
			res, err := cs.ListTools(ctx, nil)
			ts.Check(err)
			for _, t := range res.Tools {
				fmt.Fprintln(out, t.Name)
			}
			ops = ops[1:]
		case "call", "callerr":
			if len(ops) < 3 {
				ts.Fatalf("mcpc: %s NAME JSON", op)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ops[1], Arguments: json.RawMessage(ops[2])})
			if op == "callerr" {
				if err == nil {
					ts.Fatalf("mcpc: call %s succeeded, want a JSON-RPC error", ops[1])
				}
				fmt.Fprintf(out, "rpcerror: %v\n", err)
			} else {
				ts.Check(err)
				fmt.Fprintf(out, "error: %v\n", res.IsError)
				for _, c := range res.Content {
					if tc, ok := c.(*sdk.TextContent); ok {
						fmt.Fprintln(out, tc.Text)
					}
				}
				if code, ok := res.Meta[mcp.MetaCode]; ok {
					fmt.Fprintf(out, "code: %v\n", code)
				}
			}
			ops = ops[3:]
		case "notoken":
			if url == "" {
				ts.Fatalf("mcpc: notoken needs http")
			}
			resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			ts.Check(err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Fprintf(out, "status: %d\n%s", resp.StatusCode, body)
			ops = ops[1:]
		default:
			ts.Fatalf("mcpc: unknown op %q", op)
		}
	}
	ts.Check(cs.Close())
	if err := wait(); err != nil {
		ts.Fatalf("mcpc: mur mcp: %v\n%s", err, stderr.String())
	}
	// CommandTransport's Close waits for the process.
	if st := cmd.ProcessState; st == nil || st.ExitCode() != 0 {
		ts.Fatalf("mcpc: mur mcp did not exit 0 (%v):\n%s", st, stderr.String())
	}
	fmt.Fprint(ts.Stderr(), stderr.String())
}

// murCmd is the script's mur with the script's environment, in its
// current directory.
func murCmd(ts *testscript.TestScript, args ...string) *exec.Cmd {
	var bin string
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, "mur"); fileExists(p) {
			bin = p
			break
		}
	}
	if bin == "" {
		ts.Fatalf("mur is not on the script's PATH")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = append(os.Environ(), "HOME="+ts.Getenv("HOME"), "PATH="+ts.Getenv("PATH"), "TMPDIR="+ts.Getenv("TMPDIR"))
	return cmd
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

var servingRE = regexp.MustCompile(`^mur: mcp: serving (\S+)$`)
var tokenRE = regexp.MustCompile(`^mur: mcp: bearer token ([0-9a-f]+) `)

// waitServing waits up to a minute for mur mcp --http's stderr (in the
// file at path) to name its URL and token.
func waitServing(ts *testscript.TestScript, path string) (url, token string) {
	deadline := time.Now().Add(time.Minute)
	for {
		data, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(data), "\n") {
			if m := servingRE.FindStringSubmatch(line); m != nil {
				url = m[1]
			}
			if m := tokenRE.FindStringSubmatch(line); m != nil {
				token = m[1]
			}
		}
		if url != "" && token != "" {
			return url, token
		}
		if time.Now().After(deadline) {
			ts.Fatalf("mur mcp --http did not serve within a minute:\n%s", data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bearer adds the token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
