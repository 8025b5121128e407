package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/doorclient"
)

func init() { register(newStopCmd) }

// stopPoll is how often mur stop looks whether the session has closed.
const stopPoll = 50 * time.Millisecond

func newStopCmd(env *Env) *cobra.Command {
	var (
		asJSON bool
		token  string
		wait   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "stop SESSION|URL",
		Short: "Stop a running session and print what it left undone",
		Long: `Stop calls murmur.StopSession on a session's door: it stops taking work,
its running task is cancelled and its queued tasks are rejected. The
residue is printed one task a line, "canceled ID" or "rejected ID" (--json:
{"session", "canceled", "rejected"}). For a SESSION mur ps lists, stop
then waits (up to --wait) until the session has closed its records and
left the list. A URL reaches a door mur ps does not list, with --token
when it requires one.

Exit status: 0 stopped; 1 no such session, the door refused or did not
answer, or the session had not closed within --wait.`,
		Example: `  mur stop ses_20261201T120000Z_ab12cd
  mur stop --json http://127.0.0.1:8700 --token mur_…`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := resolveDoor(args[0], token)
			if err != nil {
				return &ExitError{Code: ExitFailed, Err: err}
			}
			var res door.Residue
			if err := doorclient.Call(env.Ctx, t.url, t.token, door.MethodStopSession, nil, &res); err != nil {
				return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: %w", t.url, err)}
			}
			if asJSON {
				if res.Canceled == nil {
					res.Canceled = []string{}
				}
				if res.Rejected == nil {
					res.Rejected = []string{}
				}
				out := struct {
					Session string `json:"session,omitempty"`
					door.Residue
				}{t.session, res}
				data, _ := json.Marshal(out)
				fmt.Fprintf(env.Stdout, "%s\n", data)
			} else {
				for _, id := range res.Canceled {
					fmt.Fprintf(env.Stdout, "canceled %s\n", id)
				}
				for _, id := range res.Rejected {
					fmt.Fprintf(env.Stdout, "rejected %s\n", id)
				}
			}
			if t.session == "" {
				return nil
			}
			deadline := time.Now().Add(wait)
			for !door.Gone(t.home, t.session) {
				if time.Now().After(deadline) {
					return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: stopped, but the session had not closed after %s", t.session, wait)}
				}
				select {
				case <-env.Ctx.Done():
					return nil
				case <-time.After(stopPoll):
				}
			}
			fmt.Fprintf(env.Stderr, "mur: %s: stopped\n", t.session)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the residue as JSON")
	cmd.Flags().StringVar(&token, "token", "", "bearer token for a door that requires one (default: the registration's operator token)")
	cmd.Flags().DurationVar(&wait, "wait", time.Minute, "how long to wait for a listed session to close")
	return cmd
}
