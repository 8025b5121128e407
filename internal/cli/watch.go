package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/door"
)

func init() { register(newWatchCmd) }

func newWatchCmd(env *Env) *cobra.Command {
	var (
		asJSON bool
		token  string
	)
	cmd := &cobra.Command{
		Use:   "watch SESSION|URL",
		Short: "Follow the live task events of a running session",
		Long: `Watch follows every task event of a session (murmur.WatchSession on its
door): one line per event, "HH:MM:SS task ID STATE[: text]" for a status
change, "HH:MM:SS task ID artifact: text" for an answer; --json prints each
event as the door sent it, one StreamResponse object a line (NDJSON).
SESSION is a session id mur ps lists; its door URL and operator token come
from its registration. A URL reaches a door mur ps does not list, with
--token when it requires one. Watch ends when the session ends; Ctrl-C ends
the watch only, never the session (exit 0 either way).`,
		Example: `  mur watch ses_20261201T120000Z_ab12cd
  mur watch --json http://127.0.0.1:8700 --token mur_…`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := resolveDoor(args[0], token)
			if err != nil {
				return &ExitError{Code: ExitFailed, Err: err}
			}
			if err := watchDoor(env, t, asJSON); err != nil {
				return &ExitError{Code: ExitFailed, Err: err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each event as NDJSON")
	cmd.Flags().StringVar(&token, "token", "", "bearer token for a door that requires one (default: the registration's operator token)")
	return cmd
}

// watchDoor streams until the door ends the stream (the session ended) or
// the command's context ends (Ctrl-C); neither is an error.
func watchDoor(env *Env, t doorTarget, asJSON bool) error {
	req, err := doorRequest(env.Ctx, t.url, t.token, door.MethodWatchSession, nil)
	if err != nil {
		return err
	}
	// No client timeout: the stream lives as long as the session.
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if env.Ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if err := decodeReply(resp, nil); err != nil {
			return err
		}
		return fmt.Errorf("the door at %s answered murmur.WatchSession without a stream", t.url)
	}
	name := t.session
	if name == "" {
		name = t.url
	}
	fmt.Fprintf(env.Stderr, "mur: watching %s\n", name)
	if err := followStream(resp.Body, env.Stdout, asJSON, time.Now); err != nil && env.Ctx.Err() == nil {
		return err
	}
	if env.Ctx.Err() == nil && t.session != "" {
		fmt.Fprintf(env.Stderr, "mur: %s: session ended\n", t.session)
	}
	return nil
}

// followStream copies a WatchSession SSE stream to w, one line per event,
// until the stream ends; an error envelope or an event mur cannot read
// ends it with an error.
func followStream(r io.Reader, w io.Writer, asJSON bool, now func() time.Time) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var reply rpcReply
		if err := json.Unmarshal([]byte(data), &reply); err != nil {
			return fmt.Errorf("the door sent an event that is not JSON-RPC: %w", err)
		}
		if reply.Error != nil {
			return reply.Error
		}
		if asJSON {
			var compact bytes.Buffer
			if err := json.Compact(&compact, reply.Result); err != nil {
				return fmt.Errorf("the door sent an event without a result: %w", err)
			}
			fmt.Fprintf(w, "%s\n", compact.Bytes())
			continue
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal(reply.Result, &sr); err != nil {
			return fmt.Errorf("the door sent an event mur cannot read: %w", err)
		}
		fmt.Fprintln(w, eventLine(now(), sr.Event))
	}
	if err := sc.Err(); err != nil && err != io.ErrUnexpectedEOF {
		return err
	}
	return nil
}

// eventLine is one event as a person reads it.
func eventLine(now time.Time, ev a2a.Event) string {
	stamp := now.Format("15:04:05")
	switch e := ev.(type) {
	case *a2a.Task:
		return fmt.Sprintf("%s task %s %s%s", stamp, e.ID, stateWord(e.Status.State), messageText(e.Status.Message))
	case *a2a.TaskStatusUpdateEvent:
		return fmt.Sprintf("%s task %s %s%s", stamp, e.TaskID, stateWord(e.Status.State), messageText(e.Status.Message))
	case *a2a.TaskArtifactUpdateEvent:
		text := ""
		if e.Artifact != nil {
			text = partsText(e.Artifact.Parts)
		}
		return fmt.Sprintf("%s task %s artifact: %s", stamp, e.TaskID, flatLine(text))
	case *a2a.Message:
		return fmt.Sprintf("%s message %s: %s", stamp, e.Role, flatLine(partsText(e.Parts)))
	}
	return fmt.Sprintf("%s event %T", stamp, ev)
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	if s := partsText(m.Parts); s != "" {
		return ": " + flatLine(s)
	}
	return ""
}

func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// flatLine keeps an event on one line: a model's newlines are shown as \n.
func flatLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }
