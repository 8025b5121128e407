package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/rogpeppe/go-internal/testscript"
)

// Script commands for the door scenarios (run_door_*.txtar):
//
//	freeport NAME                  set $NAME to a loopback port nobody listens on
//	a2a ADDR card                  wait up to 20s for the door at ADDR, print its card's name
//	a2a ADDR send [-now] TEXT      SendMessage TEXT (-now: returnImmediately); print
//	                               "state STATE" and "answer TEXT" and set $TASK to its id
//	a2a ADDR get ID                print "state STATE" of task ID
//	                               (every verb that prints a task also prints "running WORK_ID"
//	                               for each entry of its metadata.murmur.runningCommands)
//	a2a ADDR cancel ID             CancelTask ID; print "state STATE"
//	a2a ADDR reply ID TEXT         SendMessage TEXT on task ID (the follow-up to a task
//	                               waiting for input); print "state STATE" and "answer TEXT"
//	dooraddr NAME FILE             wait up to 30s for mur run's "door http://ADDR" line in
//	                               FILE (its stderr) and set $NAME to ADDR
//
// runhome also publishes examples/ask-go, a tool that calls request-input.
func init() {
	scriptCmds["freeport"] = cmdFreePort
	scriptCmds["a2a"] = cmdA2A
	scriptCmds["dooraddr"] = cmdDoorAddr
	runComponents = append(runComponents, struct{ dir, name string }{"../../examples/ask-go", "ask-go"})
}

func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport NAME")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ts.Check(ln.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// doorLine is the line mur run prints once its door answers.
var doorLine = regexp.MustCompile(`(?m)^mur: ses_[0-9a-z]+: door http://(\S+)$`)

func cmdDoorAddr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: dooraddr NAME FILE")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(ts.MkAbs(args[1]))
		if m := doorLine.FindSubmatch(data); m != nil {
			ts.Setenv(args[0], string(m[1]))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("dooraddr: no door line in %s after 30s; it holds:\n%s", args[1], data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cmdA2A(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: a2a ADDR card|send|get|cancel ...")
	}
	base := "http://" + args[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var card *a2a.AgentCard
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := agentcard.NewResolver(http.DefaultClient).Resolve(ctx, base)
		if err == nil {
			card = c
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("a2a: no door at %s: %v", base, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	ts.Check(err)
	show := func(t *a2a.Task) {
		fmt.Fprintf(ts.Stdout(), "state %s\n", t.Status.State)
		if m := t.Status.Message; m != nil && len(m.Parts) > 0 {
			fmt.Fprintf(ts.Stdout(), "status %s\n", m.Parts[0].Text())
		}
		var answer []string
		for _, a := range t.Artifacts {
			for _, p := range a.Parts {
				answer = append(answer, p.Text())
			}
		}
		if len(answer) > 0 {
			fmt.Fprintf(ts.Stdout(), "answer %s\n", strings.Join(answer, ""))
		}
		if m, ok := t.Metadata["murmur"].(map[string]any); ok {
			running, _ := m["runningCommands"].([]any)
			for _, id := range running {
				fmt.Fprintf(ts.Stdout(), "running %v\n", id)
			}
		}
	}
	switch rest := args[2:]; args[1] {
	case "card":
		fmt.Fprintf(ts.Stdout(), "name %s\n", card.Name)
	case "send":
		now := len(rest) > 0 && rest[0] == "-now"
		if now {
			rest = rest[1:]
		}
		if len(rest) != 1 {
			ts.Fatalf("usage: a2a ADDR send [-now] TEXT")
		}
		req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(rest[0]))}
		if now {
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
		}
		res, err := client.SendMessage(ctx, req)
		ts.Check(err)
		t, ok := res.(*a2a.Task)
		if !ok {
			ts.Fatalf("a2a send: answered %T, want a task", res)
		}
		ts.Setenv("TASK", string(t.ID))
		show(t)
	case "reply":
		if len(rest) != 2 {
			ts.Fatalf("usage: a2a ADDR reply ID TEXT")
		}
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(rest[1]))
		msg.TaskID = a2a.TaskID(rest[0])
		res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		ts.Check(err)
		t, ok := res.(*a2a.Task)
		if !ok {
			ts.Fatalf("a2a reply: answered %T, want a task", res)
		}
		show(t)
	case "get", "cancel":
		if len(rest) != 1 {
			ts.Fatalf("usage: a2a ADDR %s ID", args[1])
		}
		var t *a2a.Task
		if args[1] == "get" {
			t, err = client.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(rest[0])})
		} else {
			t, err = client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(rest[0])})
		}
		ts.Check(err)
		show(t)
	default:
		ts.Fatalf("a2a: unknown verb %q", args[1])
	}
}
