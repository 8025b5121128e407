package main

import (
	"bufio"
	"encoding/json"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// Script commands for mur run's output (run_watch.txtar):
//
//	ndjson FILE [EVENT...]   every line of FILE (stdout: the last command's) is one JSON
//	                         object with "event" and "ts" first; the EVENTs appear in
//	                         that order among them
func init() {
	scriptCmds["ndjson"] = cmdNDJSON
}

func cmdNDJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: ndjson FILE [EVENT...]")
	}
	want := args[1:]
	sc := bufio.NewScanner(strings.NewReader(ts.ReadFile(args[0])))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			ts.Fatalf("line %d is not a JSON object: %v\n%s", n, err, line)
		}
		typ, _ := obj["event"].(string)
		if _, ok := obj["ts"].(string); !ok || typ == "" || !strings.HasPrefix(line, `{"event":`) {
			ts.Fatalf("line %d lacks event and ts first: %s", n, line)
		}
		if len(want) > 0 && want[0] == typ {
			want = want[1:]
		}
	}
	ts.Check(sc.Err())
	if n == 0 {
		ts.Fatalf("%s holds no line", args[0])
	}
	if len(want) > 0 {
		ts.Fatalf("%s: no %s in order after the events before it (%d lines)", args[0], want[0], n)
	}
}
