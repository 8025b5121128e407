//go:build wasip1

// Command act-kv-go is an ACT component with sessions: a key-value store
// per session. open-session takes a namespace; put, get, list and delete
// work on the calling session's store; close-session drops it. It is the
// SDK's example and the host's end-to-end fixture (internal/act).
package main

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/murmur/mur/sdk/go/act"
	"github.com/murmur/mur/sdk/go/act/sessions"
)

type store struct {
	namespace string
	values    map[string]string
}

var (
	stores = map[string]*store{}
	opened int
)

func init() {
	sessions.Serve(sessions.Provider{
		ArgsSchema: `{"type":"object","properties":{"namespace":{"type":"string","minLength":1}},"required":["namespace"]}`,
		Open: func(args map[string]any) (string, *act.Error) {
			ns, _ := args["namespace"].(string)
			if ns == "" {
				return "", &act.Error{Kind: act.KindInvalidArgs, Message: "namespace must be a non-empty string"}
			}
			opened++
			id := fmt.Sprintf("%s-%d", ns, opened)
			stores[id] = &store{namespace: ns, values: map[string]string{}}
			return id, nil
		},
		Close: func(id string) { delete(stores, id) },
	})
	key := `{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`
	act.Serve(
		act.Tool{Name: "put", Description: "Store a value under a key in this session's store.",
			Schema: `{"type":"object","properties":{"key":{"type":"string"},"value":{"type":"string"}},"required":["key","value"]}`,
			Call: withStore(func(s *store, c act.Call) []act.Event {
				k, v := c.Args["key"].(string), c.Args["value"].(string)
				s.values[k] = v
				return []act.Event{act.Text(fmt.Sprintf("stored %s in %s", k, s.namespace))}
			})},
		act.Tool{Name: "get", Description: "Read the value of a key.", Schema: key, ReadOnly: true,
			Call: withStore(func(s *store, c act.Call) []act.Event {
				k := c.Args["key"].(string)
				v, ok := s.values[k]
				if !ok {
					return []act.Event{act.Fail(act.KindNotFound, "no key "+k+" in "+s.namespace)}
				}
				return []act.Event{act.Text(v)}
			})},
		act.Tool{Name: "list", Description: "List the keys and values as JSON.", ReadOnly: true,
			Call: withStore(func(s *store, c act.Call) []act.Event {
				keys := make([]string, 0, len(s.values))
				for k := range s.values {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				doc, _ := json.Marshal(map[string]any{"namespace": s.namespace, "keys": keys, "values": s.values})
				return []act.Event{act.JSON(string(doc))}
			})},
		act.Tool{Name: "delete", Description: "Remove a key.", Schema: key,
			Call: withStore(func(s *store, c act.Call) []act.Event {
				k := c.Args["key"].(string)
				delete(s.values, k)
				return []act.Event{act.Text("deleted " + k)}
			})},
	)
}

// withStore finds the calling session's store; a call without one, or
// with one already closed, is std:session-not-found.
func withStore(f func(*store, act.Call) []act.Event) func(act.Call) []act.Event {
	return func(c act.Call) []act.Event {
		s, ok := stores[c.SessionID]
		if !ok {
			return []act.Event{act.Fail(act.KindSessionNotFound, "no open session "+c.SessionID)}
		}
		return f(s, c)
	}
}

func main() {}
