package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/doorclient"
)

func init() { register(newPsCmd) }

// psTimeout bounds each door's ListTasks, so one stuck door does not hold
// up the listing.
const psTimeout = 5 * time.Second

// psEntry is one row of mur ps.
type psEntry struct {
	Session string         `json:"session"`
	Capsule string         `json:"capsule"`
	Version string         `json:"version,omitempty"`
	URL     string         `json:"url"`
	PID     int            `json:"pid"`
	Started time.Time      `json:"started"`
	State   string         `json:"state"`
	Tasks   map[string]int `json:"tasks"`
	Error   string         `json:"error,omitempty"`
}

func newPsCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "List the capsule sessions with an open door on this machine",
		Long: `Ps lists every session whose door is open on this machine, from the
registrations mur run keeps under ~/.murmur/run/: its id, capsule, door
URL, state and tasks. State and tasks come from the door itself
(ListTasks, with the operator token the registration holds): working when
a task runs, input-required when one waits for a reply, idle otherwise,
unreachable when the door does not answer. A registration left by a mur
that is gone (crashed, kill -9) is removed, never listed.`,
		Example: `  mur ps
  mur ps --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.MurmurDir()
			if err != nil {
				return err
			}
			running, err := door.ListRunning(home)
			if err != nil {
				return err
			}
			// Made, never nil: --json prints [] for no session.
			entries := make([]psEntry, len(running))
			for i, r := range running {
				entries[i] = probe(env.Ctx, r)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tCAPSULE\tDOOR\tSTATE\tTASKS")
			for _, e := range entries {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Session, e.Capsule, e.URL, e.State, taskSummary(e.Tasks))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// probe asks one door for its tasks and names the session's state.
func probe(ctx context.Context, r door.Running) psEntry {
	e := psEntry{Session: r.Session, Capsule: r.Capsule, Version: r.Version, URL: r.URL, PID: r.PID, Started: r.Started, Tasks: map[string]int{}}
	ctx, cancel := context.WithTimeout(ctx, psTimeout)
	defer cancel()
	token := ""
	for {
		var page a2a.ListTasksResponse
		params := map[string]any{"pageSize": 100}
		if token != "" {
			params["pageToken"] = token
		}
		if err := doorclient.Call(ctx, r.URL, r.Token, "ListTasks", params, &page); err != nil {
			e.State, e.Error = "unreachable", err.Error()
			return e
		}
		for _, t := range page.Tasks {
			e.Tasks[doorclient.StateWord(t.Status.State)]++
		}
		if page.NextPageToken == "" || len(page.Tasks) == 0 {
			break
		}
		token = page.NextPageToken
	}
	switch {
	case e.Tasks["working"] > 0:
		e.State = "working"
	case e.Tasks["input-required"] > 0:
		e.State = "input-required"
	default:
		e.State = "idle"
	}
	return e
}

// taskSummary is "1 working, 2 completed", or "-" for none.
func taskSummary(tasks map[string]int) string {
	if len(tasks) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(tasks))
	for k := range tasks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", tasks[k], k)
	}
	return strings.Join(parts, ", ")
}

// doorTarget is the door a watch or stop talks to.
type doorTarget struct {
	url, token, session string
	home                string
}

// resolveDoor turns SESSION or URL into a door. A session must be
// registered here; a URL is looked up among the registrations for its
// token, and --token (or none) is used when it is not one of them.
func resolveDoor(arg, token string) (doorTarget, error) {
	home, err := config.MurmurDir()
	if err != nil {
		return doorTarget{}, err
	}
	running, err := door.ListRunning(home)
	if err != nil {
		return doorTarget{}, err
	}
	isURL := strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://")
	for _, r := range running {
		if r.Session == arg || (isURL && strings.TrimRight(r.URL, "/") == strings.TrimRight(arg, "/")) {
			t := doorTarget{url: r.URL, token: r.Token, session: r.Session, home: home}
			if token != "" {
				t.token = token
			}
			return t, nil
		}
	}
	if isURL {
		return doorTarget{url: arg, token: token}, nil
	}
	return doorTarget{}, fmt.Errorf("no session %q is running on this machine (mur ps lists them); give its door URL to reach one elsewhere", arg)
}
