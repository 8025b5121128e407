package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/door"
	"github.com/murmur/mur/internal/lifecycle"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
)

// serveFlags are mur run's door and lifecycle flags.
type serveFlags struct {
	bind           string
	taskAcceptance string
	afterTask      string
}

// stopGrace bounds how long a stopping session waits for its tasks to
// record their end after their contexts were cancelled.
const stopGrace = 30 * time.Second

// doorPlan is what the manifest says about the door, read before the
// session opens so the port is bound first.
type doorPlan struct {
	capsule *manifest.Capsule // effective
	policy  lifecycle.Policy
	addr    string
}

// planDoor reads what the manifest and the flags say about the door. Every
// launch serves one (spec 004: the bound port is the one mur run prints and
// MURMUR_CAPSULE_URL carries; single runs "the launch's own task, or else
// the first A2A task"). A manifest that does not load returns nil: the
// session's own Open reports it.
func planDoor(path string, f serveFlags) (*doorPlan, error) {
	parsed, ds := manifest.LoadCapsule(path)
	if parsed == nil || ds.HasErrors() {
		return nil, nil
	}
	c := parsed.Effective()
	l := manifest.Lifecycle{}
	if c.Lifecycle != nil {
		l = *c.Lifecycle
	}
	if f.taskAcceptance != "" {
		l.TaskAcceptance = f.taskAcceptance
	}
	if f.afterTask != "" {
		l.AfterTask = f.afterTask
	}
	p, err := lifecycle.Resolve(&l, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("--lifecycle-task-acceptance/--lifecycle-after-task: %w", err)
	}
	dp := &doorPlan{capsule: c, policy: p, addr: f.bind}
	if dp.addr == "" {
		var port *int64
		if c.Network != nil {
			port = c.Network.InternalPort
		}
		dp.addr = door.Addr(port)
	}
	return dp, nil
}

// serveCapsule runs a capsule as a service: the door opens before the
// session (its URL is printed), the launch's own task and the door's tasks
// run through one lifecycle queue, and the session ends when the queue
// says so (after its task, on the idle timeout, on StopSession) or on
// SIGTERM, which cancels the tasks in flight and rejects the queued ones.
func serveCapsule(env *Env, o capsule.Options, dp *doorPlan) int {
	ln, err := door.Bind(dp.addr)
	if err != nil {
		var d diag.Diagnostic
		if errors.As(err, &d) {
			if dp.capsule.Network != nil && dp.capsule.Network.InternalPort != nil {
				d.Pos = dp.capsule.Pos("network.internal_port")
			} else {
				d.Field, d.Msg = "--bind", fmt.Sprintf("%s is already in use; pick another address", dp.addr)
			}
			fmt.Fprintln(env.Stderr, d.String())
		} else {
			fmt.Fprintf(env.Stderr, "mur: %v\n", err)
		}
		return capsule.ExitRefused
	}
	url := door.URLOf(ln)
	o.Stderr = env.Stderr
	o.CapsuleURL = url
	// The session and its tasks run on a context of their own, ended only
	// after the door has stopped the queue: SIGTERM cancels env.Ctx first,
	// and a queued task must be rejected before the running one ends, or
	// the queue would hand it the turn (spec 004, Tasks queued when the
	// session ends).
	runCtx, endRun := context.WithCancel(context.WithoutCancel(env.Ctx))
	defer endRun()
	s, err := capsule.Open(runCtx, o)
	if err != nil {
		ln.Close()
		return reportRefusal(env, err)
	}
	_, source, terr := s.LaunchTask()
	launch := source != session.TaskAbsent || terr != nil
	q := lifecycle.New(dp.policy, launch)
	auth, err := door.MintAuth(authOf(dp.capsule))
	if err != nil {
		ln.Close()
		fmt.Fprintf(env.Stderr, "mur: %v\n", err)
		_ = s.Close(agent.Outcome{Status: agent.ExitFailed, Reason: err.Error()})
		return capsule.ExitTask
	}
	tally := &outcomes{}
	stopped := make(chan struct{})
	var stopOnce sync.Once
	d, err := door.New(door.Config{
		Name: dp.capsule.Name, Version: dp.capsule.Version,
		Skills: skillsOf(dp.capsule), Queue: q,
		Backend: tallied{inner: s.DoorBackend(), tally: tally}, Auth: auth,
		SpillDir: s.Dirs().Runtime(), Images: s.ImageLimits(), TextOnly: s.TextOnly(),
		PeerTasks: dp.capsule.Exports != nil && dp.capsule.Exports.PeerTasks != nil && dp.capsule.Exports.PeerTasks.Accept,
		OnStop:    func() { stopOnce.Do(func() { close(stopped) }) },
	})
	if err != nil {
		ln.Close()
		fmt.Fprintf(env.Stderr, "mur: %v\n", err)
		_ = s.Close(agent.Outcome{Status: agent.ExitFailed, Reason: err.Error()})
		return capsule.ExitTask
	}
	d.Use(ln)
	if dp.policy.Sleeps() {
		// Only queue + sleep gives a background command's exit a task.
		s.StartCompletions(func(text string) error {
			_, err := d.Background(text)
			return err
		})
	}
	// Registered before the door answers, so a client that reached the
	// door finds the session in mur ps.
	reg := registerSession(env, s.ID(), dp.capsule, url, auth)
	defer func() { _ = reg.Close() }()
	d.Start()
	fmt.Fprintf(env.Stderr, "mur: %s: door %s\n", s.ID(), url)
	for _, line := range auth.Lines() {
		fmt.Fprintf(env.Stderr, "mur: %s\n", line)
	}

	if launch {
		go runLaunchTask(runCtx, env, s, q, tally)
	}
	var deadline <-chan time.Time
	if o.Deadline > 0 {
		t := time.NewTimer(o.Deadline)
		defer t.Stop()
		deadline = t.C
	}
	idle := false
	select {
	case <-q.Ended():
		idle = !launch && q.Taken() == 0
	case <-stopped:
	case <-env.Ctx.Done():
		// SIGTERM: the tasks in flight end canceled and count as such;
		// an idle session's outcome stays what its tasks made it.
	case <-deadline:
		// --deadline: the task in flight ends through its own deadline,
		// with its deadline status; the queued ones are never started.
		q.Stop()
		select {
		case <-q.Ended():
		case <-env.Ctx.Done():
		}
	}
	if idle {
		noTaskNote(env, s, dp.policy)
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	d.Stop(ctx)
	if env.Ctx.Err() != nil {
		endRun()
	}
	<-tally.launchDone(launch)
	_ = d.Close(ctx)
	final := tally.final()
	return closeSession(env, s, final)
}

// noTaskNote says why a launch that took no task ended: none takes no
// task from the door, and every other lifecycle waited its idle timeout.
func noTaskNote(env *Env, s *capsule.Session, p lifecycle.Policy) {
	why := "no task arrived at the door within " + p.IdleTimeout.String()
	if p.Acceptance == lifecycle.AcceptNone {
		why = "no task (lifecycle.task_acceptance: none takes none from the door)"
	}
	fmt.Fprintf(env.Stderr, "mur: %s: %s: give one with --task, or put task.md or input.txt in the work folder %s\n", s.ID(), why, s.Dirs().Workdir)
}

// runLaunchTask runs --task (or task.md / input.txt) as the queue's first
// task, so the door sees the capsule busy while it runs.
func runLaunchTask(ctx context.Context, env *Env, s *capsule.Session, q *lifecycle.Queue, tally *outcomes) {
	defer tally.markLaunchDone()
	const id = "launch"
	if q.Launch(id) != lifecycle.Admitted {
		return
	}
	if err := q.Wait(ctx, id); err != nil {
		return
	}
	defer q.Done(id)
	// Its text and events reach the person through the session's stream
	// (watchRun), not a sink of the task's own.
	tally.add(s.RunLaunchTask(ctx, nil))
}

// registerSession lists the session for mur ps, watch and stop. A machine where
// it cannot be written still serves the door: the warning says what is lost.
func registerSession(env *Env, id string, c *manifest.Capsule, url string, auth *door.Auth) *door.Registration {
	home, err := config.MurmurDir()
	if err == nil {
		r := door.Running{Session: id, Capsule: c.Name, Version: c.Version, URL: url, PID: os.Getpid(), Started: time.Now().UTC()}
		if auth != nil {
			r.Token = auth.Operator
		}
		var reg *door.Registration
		if reg, err = door.Register(home, r); err == nil {
			return reg
		}
	}
	fmt.Fprintf(env.Stderr, "mur: %v; mur ps will not list this session\n", err)
	return nil
}

func authOf(c *manifest.Capsule) *manifest.Authentication {
	if c.Network == nil {
		return nil
	}
	return c.Network.Authentication
}

// skillsOf lists the capsule's tools and skills as card skills.
func skillsOf(c *manifest.Capsule) []door.Skill {
	var out []door.Skill
	for _, a := range c.Artifacts {
		if r := a.Role(); r == manifest.RoleTool || r == manifest.RoleSkill {
			out = append(out, door.Skill{ID: a.Name, Name: a.Name, Description: r + " " + a.Name})
		}
	}
	return out
}

// tallied is the session's backend, noting each task's end for the
// session's own outcome.
type tallied struct {
	inner door.Backend
	tally *outcomes
}

func (t tallied) RunTask(ctx context.Context, task door.Task, u door.Updates) door.Outcome {
	out := t.inner.RunTask(ctx, task, u)
	status := agent.ExitFailed
	switch out.State {
	case door.Completed:
		status = agent.ExitOK
	case door.Canceled:
		status = agent.ExitCanceled
	}
	t.tally.add(agent.Outcome{TaskID: task.ID, Status: status, Answer: out.Text, Reason: out.Text})
	return out
}

func (t tallied) Record(kind door.RecordKind, task door.Task) { t.inner.Record(kind, task) }

// outcomes folds the tasks that ran into the session's outcome: a failed
// task fails the session, else a cancelled one cancels it; refused tasks
// never count (spec 004, Tasks queued when the session ends).
type outcomes struct {
	mu     sync.Mutex
	last   *agent.Outcome
	worst  *agent.Outcome
	doneCh chan struct{}
	once   sync.Once
}

func (o *outcomes) add(out agent.Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last = &out
	if o.worst == nil || rank(out.Status) > rank(o.worst.Status) {
		o.worst = &out
	}
}

func rank(status string) int {
	switch status {
	case agent.ExitOK:
		return 0
	case agent.ExitCanceled:
		return 1
	}
	return 2
}

func (o *outcomes) final() agent.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.worst == nil:
		return agent.Outcome{Status: agent.ExitOK}
	case o.worst.Status == agent.ExitOK:
		return *o.last
	}
	return *o.worst
}

func (o *outcomes) ch() chan struct{} {
	o.once.Do(func() { o.doneCh = make(chan struct{}) })
	return o.doneCh
}

func (o *outcomes) markLaunchDone() { close(o.ch()) }

// launchDone is closed once the launch task has ended (at once without
// one).
func (o *outcomes) launchDone(launch bool) <-chan struct{} {
	if !launch {
		c := make(chan struct{})
		close(c)
		return c
	}
	return o.ch()
}

// reportRefusal prints why capsule.Open refused and returns exit 2.
func reportRefusal(env *Env, err error) int {
	var refused diag.ListError
	if errors.As(err, &refused) {
		for _, d := range refused {
			fmt.Fprintln(env.Stderr, d.String())
		}
	} else {
		fmt.Fprintf(env.Stderr, "mur: %v\n", err)
	}
	return capsule.ExitRefused
}
