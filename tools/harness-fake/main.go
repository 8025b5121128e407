// Command harness-fake is a scripted harness CLI for the process
// transport's tests. It speaks the JSON-lines protocol of the process
// driver skeleton (examples/process-driver-skeleton-go): flags --output
// jsonl --max-turns N [--model M] [--system S] [--resume ID] [--mcp URL
// --tools a,b]; the prompt on stdin; one JSON object a line on stdout.
//
// The prompt is its script, one directive a line:
//
//	say TEXT            a text line (one model message)
//	tool NAME JSON      a tool_use line (one tool call)
//	usage IN OUT        a usage line
//	result TEXT         the final result; the run ends
//	fail TEXT           an error line (a failed turn)
//	sleep SECONDS       wait
//	hang                wait forever (a script with hang ignores SIGINT throughout)
//	flood BYTES         print one line of BYTES bytes
//	noise LINES         print LINES progress lines
//	badjson             print a line that is not JSON
//	die CODE            exit with CODE at once
//	linger SECONDS TEXT exit 0 at once, leaving a child holding stdout that
//	                    prints a text line "lingering" after SECONDS, then
//	                    result TEXT after SECONDS more
//	env                 a text line listing the environment, sorted
//	args                a text line with the arguments
//	stdin-stop          wait for a line "stop" on stdin, then print
//	                    result "stopped"
//	mcp NAME JSON       a tool_use line, then call tool NAME with the JSON
//	                    arguments on the --mcp tool server (the official
//	                    MCP Go SDK client, bearer token HARNESS_MCP_TOKEN)
//	                    and print the result as a text line:
//	                    "tool NAME ok|error: TEXT"
//
// SIGINT ends it with a result line "interrupted" (unless hanging). It
// starts with a session line: the --resume id when it was given and is
// known (a file .harness-fake/ID in its working folder), else a new id; an
// unknown --resume id is an error line with code session_not_found.
// --version prints "harness VERSION", VERSION from the binary's name
// (harness-v0.9.0 prints 0.9.0; harness-noversion prints no version;
// otherwise 1.2.3).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

func main() {
	args := os.Args[1:]
	if len(args) == 3 && args[0] == "--linger-child" {
		d, _ := strconv.ParseFloat(args[1], 64)
		time.Sleep(time.Duration(d * float64(time.Second)))
		emit(map[string]any{"type": "text", "text": "lingering"})
		time.Sleep(time.Duration(d * float64(time.Second)))
		emit(map[string]any{"type": "result", "text": args[2]})
		return
	}
	if len(args) > 0 && args[0] == "--version" {
		base := filepath.Base(os.Args[0])
		switch {
		case strings.HasPrefix(base, "harness-v"):
			fmt.Printf("harness %s\n", strings.TrimPrefix(base, "harness-v"))
		case base == "harness-noversion":
			fmt.Println("harness (development build)")
		default:
			fmt.Println("harness 1.2.3")
		}
		return
	}
	resume, server := "", ""
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--resume":
			resume = args[i+1]
		case "--mcp":
			server = args[i+1]
		}
	}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, syscall.SIGINT)
	go func() {
		<-interrupted
		emit(map[string]any{"type": "result", "text": "interrupted"})
		os.Exit(0)
	}()

	in := bufio.NewReader(os.Stdin)
	var script []string
	for {
		line, err := in.ReadString('\n')
		if s := strings.TrimRight(line, "\r\n"); s != "" {
			if s == "stdin-stop" {
				script = append(script, s)
				break
			}
			script = append(script, s)
		}
		if err != nil {
			break
		}
	}

	const known = ".harness-fake"
	id := resume
	if resume != "" {
		if _, err := os.Stat(filepath.Join(known, resume)); err != nil {
			emit(map[string]any{"type": "error", "code": "session_not_found", "message": "no session " + resume})
			os.Exit(1)
		}
	} else {
		id = fmt.Sprintf("hs-%d", time.Now().UnixNano())
		if err := os.MkdirAll(known, 0o755); err == nil {
			os.WriteFile(filepath.Join(known, id), nil, 0o644)
		}
	}
	// A script that hangs plays a harness deaf to SIGINT from its start:
	// ignoring it only on reaching hang would let an interrupt sent right
	// after the session line end the run before then.
	if slices.Contains(script, "hang") {
		signal.Ignore(syscall.SIGINT)
	}
	emit(map[string]any{"type": "session", "id": id})

	for n, d := range script {
		verb, rest, _ := strings.Cut(d, " ")
		switch verb {
		case "say":
			emit(map[string]any{"type": "text", "text": rest})
		case "tool":
			name, input, _ := strings.Cut(rest, " ")
			if input == "" {
				input = "{}"
			}
			emit(map[string]any{"type": "tool_use", "id": fmt.Sprintf("call-%d", n), "name": name, "input": json.RawMessage(input)})
		case "usage":
			f := strings.Fields(rest)
			a, _ := strconv.ParseUint(f[0], 10, 64)
			b, _ := strconv.ParseUint(f[1], 10, 64)
			emit(map[string]any{"type": "usage", "input_tokens": a, "output_tokens": b})
		case "result":
			emit(map[string]any{"type": "result", "text": rest})
			return
		case "fail":
			emit(map[string]any{"type": "error", "message": rest})
			os.Exit(1)
		case "sleep":
			s, _ := strconv.ParseFloat(rest, 64)
			time.Sleep(time.Duration(s * float64(time.Second)))
		case "hang":
			signal.Ignore(syscall.SIGINT)
			select {}
		case "flood":
			n, _ := strconv.Atoi(rest)
			w := bufio.NewWriterSize(os.Stdout, 1<<16)
			for i := 0; i < n; i++ {
				w.WriteByte('x')
			}
			w.WriteByte('\n')
			w.Flush()
		case "noise":
			n, _ := strconv.Atoi(rest)
			for i := 0; i < n; i++ {
				emit(map[string]any{"type": "progress", "n": i})
			}
		case "badjson":
			fmt.Println("{this is not json")
		case "die":
			c, _ := strconv.Atoi(rest)
			os.Exit(c)
		case "linger":
			secs, text, _ := strings.Cut(rest, " ")
			child := exec.Command(os.Args[0], "--linger-child", secs, text)
			child.Stdout, child.Stderr = os.Stdout, os.Stderr
			if err := child.Start(); err != nil {
				emit(map[string]any{"type": "error", "message": err.Error()})
				os.Exit(1)
			}
			os.Exit(0)
		case "env":
			env := os.Environ()
			sort.Strings(env)
			emit(map[string]any{"type": "text", "text": strings.Join(env, " ")})
		case "args":
			emit(map[string]any{"type": "text", "text": strings.Join(args, " ")})
		case "mcp":
			name, input, _ := strings.Cut(rest, " ")
			emit(map[string]any{"type": "tool_use", "id": fmt.Sprintf("call-%d", n), "name": name, "input": json.RawMessage(orEmpty(input))})
			emit(map[string]any{"type": "text", "text": callTool(server, name, orEmpty(input))})
		case "stdin-stop":
			for {
				line, err := in.ReadString('\n')
				if strings.TrimSpace(line) == "stop" {
					emit(map[string]any{"type": "result", "text": "stopped"})
					return
				}
				if err != nil {
					os.Exit(2)
				}
			}
		default:
			emit(map[string]any{"type": "error", "message": "unknown directive " + verb})
			os.Exit(2)
		}
	}
	emit(map[string]any{"type": "error", "message": "the script ended without a result"})
	os.Exit(1)
}

func orEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

type bearer string

// callTool calls one tool on the harness's tool server, as a harness's
// MCP client does.
func callTool(server, name, input string) string {
	if server == "" {
		return "tool " + name + " error: no tool server was given (--mcp)"
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(input), &args); err != nil {
		return "tool " + name + " error: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// No proxy: the tool server is on the harness's own loopback.
	tr := &http.Transport{Proxy: nil}
	client := &http.Client{Transport: roundTripper{bearer(os.Getenv("HARNESS_MCP_TOKEN")), tr}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "harness-fake", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: server, HTTPClient: client}, nil)
	if err != nil {
		return "tool " + name + " error: connect: " + err.Error()
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "tool " + name + " error: " + err.Error()
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	status := "ok"
	if res.IsError {
		status = "error"
	}
	return "tool " + name + " " + status + ": " + strings.Join(text, " ")
}

// roundTripper sets the bearer token, then sends through tr.
type roundTripper struct {
	token bearer
	tr    *http.Transport
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(r.token))
	return r.tr.RoundTrip(req)
}
