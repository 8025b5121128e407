//go:build wasip1

// Command script-go is a script capsule (world
// murmur:runtime-guest/capsule): no model, the component drives its
// capsule's tools itself. It asks echo-go to echo a greeting, has file-go
// write what came back to greeting.txt, reads the file back through
// file-go, and prints what it wrote: the session's answer. A call that
// does not pass (a tool the capsule lacks, a policy hook's deny) fails the
// task with that tool's reason.
package main

import (
	"encoding/json"
	"fmt"

	"github.com/murmur/mur/sdk/go/capsule"
)

func init() { capsule.Run(run) }

func run() error {
	echoed, err := call("echo-go", map[string]string{"text": "hello from a script capsule"})
	if err != nil {
		return err
	}
	var msg struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(echoed), &msg); err != nil {
		return fmt.Errorf("echo-go returned %q, not the JSON it was given: %w", echoed, err)
	}
	if _, err := call("file-go", map[string]string{"op": "write", "path": "greeting.txt", "content": msg.Text}); err != nil {
		return err
	}
	back, err := call("file-go", map[string]string{"op": "read", "path": "greeting.txt"})
	if err != nil {
		return err
	}
	fmt.Printf("greeting.txt: %s\n", back)
	return nil
}

// call invokes a tool of the capsule and returns its text, or an error
// naming the tool when the call did not pass.
func call(tool string, input any) (string, error) {
	r, err := capsule.InvokeJSON(tool, input)
	if err != nil {
		return "", err
	}
	if r.Status != capsule.StatusPassed {
		return "", fmt.Errorf("%s: %s: %s", tool, r.Status, r.Text())
	}
	return r.Text(), nil
}

func main() {}
