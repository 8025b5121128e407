package cli

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/doorclient"
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
	req, err := doorclient.Request(env.Ctx, t.url, t.token, door.MethodWatchSession, nil)
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
		if err := doorclient.DecodeReply(resp, nil); err != nil {
			return err
		}
		return fmt.Errorf("the door at %s answered murmur.WatchSession without a stream", t.url)
	}
	name := t.session
	if name == "" {
		name = t.url
	}
	fmt.Fprintf(env.Stderr, "mur: watching %s\n", name)
	if err := doorclient.Follow(resp.Body, env.Stdout, asJSON, time.Now); err != nil && env.Ctx.Err() == nil {
		return err
	}
	if env.Ctx.Err() == nil && t.session != "" {
		fmt.Fprintf(env.Stderr, "mur: %s: session ended\n", t.session)
	}
	return nil
}
