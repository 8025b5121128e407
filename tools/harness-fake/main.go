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
//	hang                wait forever, ignoring SIGINT
//	flood BYTES         print one line of BYTES bytes
//	noise LINES         print LINES progress lines
//	badjson             print a line that is not JSON
//	die CODE            exit with CODE at once
//	env                 a text line listing the environment, sorted
//	args                a text line with the arguments
//	stdin-stop          wait for a line "stop" on stdin, then print
//	                    result "stopped"
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
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

func main() {
	args := os.Args[1:]
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
	resume := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--resume" {
			resume = args[i+1]
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
		case "env":
			env := os.Environ()
			sort.Strings(env)
			emit(map[string]any{"type": "text", "text": strings.Join(env, " ")})
		case "args":
			emit(map[string]any{"type": "text", "text": strings.Join(args, " ")})
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
