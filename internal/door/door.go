// Package door is a capsule's A2A 1.0 door: the JSON-RPC binding with SSE
// streams (SendMessage, SendStreamingMessage, GetTask, ListTasks,
// CancelTask, SubscribeToTask), the agent card, bearer authentication with
// per-method scopes, the exports.peer_tasks refusal, and the murmur.*
// session methods (WatchSession, StopSession). The A2A machinery is the
// official Go SDK (github.com/a2aproject/a2a-go/v2); the door adds what the
// capsule manifest asks of it around the SDK and runs admitted tasks
// through a Backend in the order a lifecycle.Queue gives them.
//
// The door never imports the session: a session implements Backend.
package door

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/lifecycle"
)

// Defaults for the bounds Config leaves zero.
const (
	// DefaultMaxBodyBytes bounds one JSON-RPC request body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultReadTimeout bounds reading one request, headers and body.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds one write to a client: a reader that stops
	// reading a stream loses the stream after it.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultKeepTasks is how many ended tasks the door keeps readable.
	DefaultKeepTasks = 1000
	// DefaultKeepAlive is the SSE comment interval that keeps idle streams
	// open through proxies.
	DefaultKeepAlive = 15 * time.Second
)

// Config is what a door is built from.
type Config struct {
	// Name, Version and Description describe the capsule on the card.
	Name, Version, Description string
	// Skills are listed on the card, one per tool.
	Skills []Skill
	// Queue admits and orders tasks; its policy is the session's lifecycle.
	Queue *lifecycle.Queue
	// Backend runs the admitted tasks.
	Backend Backend
	// Auth is network.authentication's minted tokens; nil for a public door.
	Auth *Auth
	// PeerTasks is exports.peer_tasks.accept.
	PeerTasks bool
	// OnStop, when set, runs when a caller holding murmur.StopSession stops
	// the session, after the door stopped taking work and cancelled every
	// task. The session ends itself from it.
	OnStop func()

	// KeepTasks bounds the ended tasks GetTask and ListTasks still find;
	// the oldest is forgotten first.
	KeepTasks int
	// SpillDir, when set, is where ended tasks are kept off the heap, in
	// an unlinked file; empty keeps them in memory.
	SpillDir string
	// Images are context.images: a message's images are refused past
	// them (-32602). The zero value takes the spec's defaults.
	Images images.Limits
	// TextOnly, when set, says why the capsule's model is handed a task's
	// text and nothing else (a harness under transport: process, whose
	// launch request carries the prompt only): a message carrying an image
	// is refused with -32602 naming the part and this reason, rather than
	// the image being dropped unseen, and the card offers text/plain only.
	TextOnly string
	// MaxBodyBytes bounds one request body; unset, it is
	// DefaultMaxBodyBytes plus room for max_per_turn images of max_bytes
	// each, base64-encoded.
	MaxBodyBytes int64
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	KeepAlive    time.Duration
	// Logger receives the SDK's log lines; nil discards them.
	Logger *slog.Logger
}

// Door is one capsule's A2A door.
type Door struct {
	cfg     Config
	queue   *lifecycle.Queue
	backend Backend
	store   *store
	rpc     http.Handler
	base    context.Context
	stopAll context.CancelFunc

	listener net.Listener
	server   *http.Server
	url      string

	mu       sync.Mutex
	runs     map[string]*run
	watchers map[chan a2a.Event]struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once
	residue  Residue
}

// New builds a door. It does not listen yet.
func New(cfg Config) (*Door, error) {
	if cfg.Queue == nil || cfg.Backend == nil {
		return nil, errors.New("door: a queue and a backend are required")
	}
	if cfg.Images == (images.Limits{}) {
		cfg.Images, _ = images.Resolve(nil)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes + int64(cfg.Images.MaxPerTurn)*base64Len(cfg.Images.MaxBytes)
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.KeepTasks <= 0 {
		cfg.KeepTasks = DefaultKeepTasks
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	base, stopAll := context.WithCancel(context.Background())
	d := &Door{
		cfg: cfg, queue: cfg.Queue, backend: cfg.Backend, store: newStore(cfg.KeepTasks),
		base: base, stopAll: stopAll,
		runs: map[string]*run{}, watchers: map[chan a2a.Event]struct{}{},
	}
	if cfg.SpillDir != "" {
		sp, err := openSpill(cfg.SpillDir)
		if err != nil {
			return nil, err
		}
		d.store.spill = sp
	}
	handler := a2asrv.NewHandler(executor{d},
		a2asrv.WithTaskStore(d.store),
		a2asrv.WithLogger(cfg.Logger),
		a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true, ExtendedAgentCard: cfg.Auth != nil}),
		a2asrv.WithExtendedAgentCardProducer(a2asrv.ExtendedAgentCardProducerFn(func(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
			return d.card(), nil
		})),
	)
	d.rpc = a2asrv.NewJSONRPCHandler(settledCancel{handler, d},
		a2asrv.WithTransportKeepAlive(cfg.KeepAlive),
		a2asrv.WithTransportPanicHandler(func(r any) error {
			cfg.Logger.Error("door: panic serving a request", "panic", r)
			return fmt.Errorf("%w: the door failed serving this request", a2a.ErrInternalError)
		}),
	)
	return d, nil
}

// Bind opens the door's listening socket on addr ("127.0.0.1:0" lets the
// OS pick the port) before the door exists, so the session can be told its
// URL (MURMUR_CAPSULE_URL) as it opens. A port that network.internal_port
// names and another process holds is E-RUN-010.
func Bind(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, diag.Diagnostic{Code: diag.RunPortInUse, Field: "network.internal_port",
				Msg: fmt.Sprintf("the door cannot bind %s: the port is already in use; free it, pick another internal_port, or omit internal_port to let the OS choose", addr)}
		}
		return nil, fmt.Errorf("door: listening on %s: %w", addr, err)
	}
	return ln, nil
}

// Addr is the loopback address network.internal_port names, or one the OS
// picks when port is nil.
func Addr(port *int64) string {
	p := "0"
	if port != nil {
		p = strconv.FormatInt(*port, 10)
	}
	return net.JoinHostPort("127.0.0.1", p)
}

// URLOf is the base URL of a door listening on ln.
func URLOf(ln net.Listener) string { return "http://" + ln.Addr().String() }

// Listen binds addr for the door (see Bind).
func (d *Door) Listen(addr string) error {
	ln, err := Bind(addr)
	if err != nil {
		return err
	}
	d.Use(ln)
	return nil
}

// ListenPort binds the loopback port network.internal_port names, or one
// the OS picks when port is nil.
func (d *Door) ListenPort(port *int64) error { return d.Listen(Addr(port)) }

// Use makes ln, from Bind, the door's socket.
func (d *Door) Use(ln net.Listener) {
	d.listener = ln
	d.url = URLOf(ln)
}

// URL is the door's base URL, the one MURMUR_CAPSULE_URL carries.
func (d *Door) URL() string { return d.url }

// Start serves the door in the background until Close.
func (d *Door) Start() {
	d.server = &http.Server{
		Handler:           d.Handler(),
		ReadHeaderTimeout: d.cfg.ReadTimeout,
		ReadTimeout:       d.cfg.ReadTimeout,
		IdleTimeout:       2 * d.cfg.ReadTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(d.cfg.Logger.Handler(), slog.LevelWarn),
	}
	go func() { _ = d.server.Serve(d.listener) }()
}

// Residue is what StopSession or SIGTERM left: the tasks cancelled while
// they ran and the queued ones rejected before they started.
type Residue struct {
	Canceled []string `json:"canceled"`
	Rejected []string `json:"rejected"`
}

// Stop ends every task (SIGTERM, StopSession): the queue stops taking work
// and rejects what it holds, and each running task's context is cancelled
// so it ends TASK_STATE_CANCELED. It waits until every run has recorded its
// end or ctx ends.
func (d *Door) Stop(ctx context.Context) Residue {
	d.stopOnce.Do(func() {
		running := d.queue.Running()
		d.residue.Rejected = d.queue.Stop()
		if running != "" {
			d.residue.Canceled = []string{running}
		}
		d.stopAll()
	})
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return d.residue
}

// Close stops serving: open streams end, and Close waits for handlers up
// to ctx.
func (d *Door) Close(ctx context.Context) error {
	d.stopAll()
	defer d.store.close()
	d.mu.Lock()
	for w := range d.watchers {
		delete(d.watchers, w)
		close(w)
	}
	d.mu.Unlock()
	if d.server == nil {
		if d.listener != nil {
			return d.listener.Close()
		}
		return nil
	}
	err := d.server.Shutdown(ctx)
	if err != nil {
		_ = d.server.Close()
	}
	return err
}

// publish hands ev to every murmur.WatchSession stream. A watcher that
// falls a whole buffer behind loses its stream rather than slowing tasks.
func (d *Door) publish(ev a2a.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for w := range d.watchers {
		select {
		case w <- ev:
		default:
			delete(d.watchers, w)
			close(w)
		}
	}
}

func (d *Door) watch() chan a2a.Event {
	w := make(chan a2a.Event, 256)
	d.mu.Lock()
	d.watchers[w] = struct{}{}
	d.mu.Unlock()
	return w
}

func (d *Door) unwatch(w chan a2a.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.watchers[w]; ok {
		delete(d.watchers, w)
		close(w)
	}
}

// drain discards the rest of a body the door refused, bounded, so the
// connection can serve the next request.
func drain(r io.Reader) { _, _ = io.CopyN(io.Discard, r, 64<<10) }
