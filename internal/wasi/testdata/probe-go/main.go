//go:build wasip1

// Command wasi-probe-go is a test guest for internal/wasi: each call reports
// one thing the WASI host lets it see, so the host's tests can check the
// policy from inside a real Go guest. Input is JSON {"op": ..., "arg": ...}:
// env (the value of arg, "<unset>" when absent), environ (every NAME=value),
// args, print (arg to stdout, then "err:"+arg to stderr), read (file arg).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/murmur/mur/sdk/go/tool"
)

type request struct {
	Op  string `json:"op"`
	Arg string `json:"arg"`
}

func init() { tool.Run(handle) }

func handle(in tool.Input) tool.Result {
	var req request
	if err := json.Unmarshal([]byte(in.Text()), &req); err != nil {
		return tool.Failed("bad input: " + err.Error())
	}
	switch req.Op {
	case "env":
		v, ok := os.LookupEnv(req.Arg)
		if !ok {
			v = "<unset>"
		}
		return tool.Passed(v)
	case "environ":
		return tool.Passed(strings.Join(os.Environ(), "\n"))
	case "args":
		return tool.Passed(strings.Join(os.Args, " "))
	case "print":
		fmt.Fprint(os.Stdout, req.Arg)
		fmt.Fprint(os.Stderr, "err:"+req.Arg)
		return tool.Passed("printed")
	case "read":
		b, err := os.ReadFile(req.Arg)
		if err != nil {
			return tool.Failed(err.Error())
		}
		return tool.Passed(string(b))
	}
	return tool.Failed("unknown op " + req.Op)
}

func main() {}
