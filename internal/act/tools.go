package act

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/images"
	"github.com/murmur/mur/internal/wasm/cm"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ErrSchema means a parameters-schema (or the session's args schema) is
// not a JSON Schema this host can compile.
var ErrSchema = errors.New("ACT schema")

// Options are what a capsule hands one ACT component.
type Options struct {
	// Name is the artifact name, for messages and the bare tool prefix.
	Name string
	// Info is the component's act:component section.
	Info Info
	// Instance returns the component's instance under the artifact's
	// grants, made on the first call (the capsule's lazy component); its
	// caller owns it and drops it after Close.
	Instance func(ctx context.Context) (*component.Instance, error)
	// Drop, when set, drops the instance a stopped call left unusable (a
	// guest stopped mid-call cannot be entered again), so that the next
	// Instance call makes a fresh one.
	Drop func()
	// Language is the capsule's language (BCP 47), for localized texts.
	Language string
	// SessionArgs are the open-session args, from the artifact entry's
	// config: each top-level key becomes one metadata entry whose value is
	// the key's JSON value in deterministic CBOR.
	SessionArgs map[string]any
	// Secret resolves a top-level SessionArgs value written as a
	// credential reference ${NAME} (ACT-AUTH puts a component's
	// credentials in its session args), as a gateway key resolves; it is
	// called at each open-session, so a rotated key reaches the next
	// session. nil hands the reference over as text.
	Secret func(name string) (string, error)
	// Files returns the folder where content parts the model cannot read
	// as text are written (the session's records); it is called at the
	// first such part.
	Files func() string
	// CloseTimeout bounds close-session at Close (default 5 s).
	CloseTimeout time.Duration
}

// Component serves one ACT component's tools to a session: listed once,
// each call's arguments checked against its schema and converted to
// deterministic CBOR, its session opened at the first call and closed at
// Close. Calls are serialised: an instance is single-threaded.
type Component struct {
	o     Options
	defs  []ToolDefinition
	check map[string]*jsonschema.Schema
	// timeout is each tool's own std:timeout-ms, when it declares one.
	timeout map[string]time.Duration

	mu      sync.Mutex
	inst    *component.Instance
	prov    *Provider
	session *Session
	files   int
	closed  bool
	// log records the session lifecycle (open, close, failures) for
	// mur act call and the tests; a capsule reads it in its records.
	log []string
}

// List instantiates nothing itself: it calls list-tools on inst (an
// instance under a deny-all policy, made before the session's folders
// exist) and returns the definitions.
func List(ctx context.Context, inst *component.Instance) ([]ToolDefinition, error) {
	p, err := Bind(inst)
	if err != nil {
		return nil, err
	}
	_, defs, err := p.ListTools(ctx, nil)
	return defs, err
}

// New checks defs (names unique, every parameters-schema a JSON Schema)
// and returns the component ready to serve them.
func New(o Options, defs []ToolDefinition) (*Component, error) {
	if o.CloseTimeout == 0 {
		o.CloseTimeout = 5 * time.Second
	}
	c := &Component{o: o, defs: defs, check: map[string]*jsonschema.Schema{}, timeout: map[string]time.Duration{}}
	for _, d := range defs {
		if d.Name == "" {
			return nil, fmt.Errorf("%w: component %q lists a tool with no name", ErrComponent, o.Name)
		}
		if _, dup := c.check[d.Name]; dup {
			return nil, fmt.Errorf("%w: component %q lists two tools named %q", ErrComponent, o.Name, d.Name)
		}
		s, err := compileSchema("act:"+o.Name+"/"+d.Name, d.ParametersSchema)
		if err != nil {
			return nil, fmt.Errorf("%w: component %q tool %q parameters-schema: %w", ErrSchema, o.Name, d.Name, err)
		}
		c.check[d.Name] = s
		if raw, ok := d.Metadata.Get(MetaTimeoutMS); ok {
			var ms uint64
			if err := decMode.Unmarshal(raw, &ms); err != nil || ms == 0 || ms > uint64(maxTimeout/time.Millisecond) {
				return nil, fmt.Errorf("%w: component %q tool %q: %s must be a CBOR unsigned integer of milliseconds, 1 to %d", ErrComponent, o.Name, d.Name, MetaTimeoutMS, uint64(maxTimeout/time.Millisecond))
			}
			c.timeout[d.Name] = time.Duration(ms) * time.Millisecond
		}
	}
	return c, nil
}

// maxTimeout bounds std:timeout-ms so the duration cannot overflow; no
// call outlives capabilities.limits.deadline_seconds anyway.
const maxTimeout = 365 * 24 * time.Hour

// compileSchema compiles one JSON Schema document. Nothing is fetched: a
// $ref outside the document fails.
func compileSchema(url, doc string) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	if err := comp.AddResource(url, v); err != nil {
		return nil, err
	}
	return comp.Compile(url)
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s is outside the document; this host loads none", url)
}

// Definitions returns the listed tools.
func (c *Component) Definitions() []ToolDefinition { return c.defs }

// Tools returns one agent.Tool per listed tool, for the capsule's
// inventory: the model sees the tool's name, its description in the
// capsule's language and its parameters-schema.
func (c *Component) Tools() []agent.Tool {
	out := make([]agent.Tool, 0, len(c.defs))
	for _, d := range c.defs {
		out = append(out, &tool{c: c, def: d, agentDef: agent.ToolDef{
			Name:        d.Name,
			Description: d.Description.Resolve(c.o.Language, c.o.Info.DefaultLanguage),
			InputSchema: json.RawMessage(d.ParametersSchema),
			Kind:        agent.KindTool,
		}})
	}
	return out
}

// Log returns the session lifecycle lines so far.
func (c *Component) Log() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.log...)
}

type tool struct {
	c        *Component
	def      ToolDefinition
	agentDef agent.ToolDef
}

func (t *tool) Def() agent.ToolDef { return t.agentDef }

// Call checks input against the tool's schema (std:invalid-args without
// calling the component when it fails), encodes it as deterministic CBOR
// and calls the tool in the component's session.
func (t *tool) Call(ctx context.Context, input json.RawMessage) (agent.Result, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage(`{}`)
	}
	if err := t.c.validate(t.def.Name, input); err != nil {
		return refusal(KindInvalidArgs, err.Error()), nil
	}
	args, err := JSONToCBOR(input)
	if err != nil {
		return refusal(KindInvalidArgs, err.Error()), nil
	}
	parent := ctx
	limit, own := t.c.timeout[t.def.Name]
	if own {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	events, err := t.c.call(ctx, t.def.Name, args)
	if err != nil {
		// The tool's own std:timeout-ms ended the call (not the task's
		// context, nor capabilities.limits.deadline_seconds, which is
		// reported as any WASM tool's): the model reads std:timeout.
		// The store's epoch check can see the deadline pass before the
		// context's own timer marks it done, so the clock decides.
		if d, _ := ctx.Deadline(); own && parent.Err() == nil && !time.Now().Before(d) && (errors.Is(err, cm.ErrDeadline) || errors.Is(err, context.DeadlineExceeded)) {
			t.c.lost(err)
			return refusal(KindTimeout, fmt.Sprintf("the call ran past the tool's %s (%s) and was stopped", MetaTimeoutMS, limit)), nil
		}
		return agent.Result{}, err
	}
	res, err := t.c.route(t.def.Name, events)
	if err != nil {
		return agent.Result{}, err
	}
	if ro, ok := t.def.Metadata.Get(MetaReadOnly); ok {
		if v, err := ToJSONValue(ro); err == nil && v == true {
			res.Metadata = append(res.Metadata, [2]string{agent.MetaStateEffect, "read"})
		}
	}
	return res, nil
}

func (c *Component) validate(name string, input []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return fmt.Errorf("the arguments are not JSON: %w", err)
	}
	if err := c.check[name].Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("the arguments do not match the tool's parameters-schema: %s", oneLine(ve))
		}
		return err
	}
	return nil
}

// english prints schema errors; the library needs a printer.
var english = message.NewPrinter(language.English)

// oneLine flattens a validation error's causes into one line the model
// can act on.
func oneLine(ve *jsonschema.ValidationError) string {
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			parts = append(parts, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(english)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(parts, "; ")
}

// call makes the instance and the session if need be, then calls the
// tool with std:session-id. A session the component no longer knows
// (std:session-not-found) is forgotten, so the next call opens another.
func (c *Component) call(ctx context.Context, name string, args []byte) ([]Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("ACT component %q is closed", c.o.Name)
	}
	if err := c.ready(ctx); err != nil {
		return nil, err
	}
	var meta Metadata
	if c.prov.HasSessions() {
		if c.session == nil {
			s, err := c.open(ctx)
			if err != nil {
				return []Event{{Err: asError(err)}}, nil
			}
			c.session = &s
		}
		id, _ := encMode.Marshal(c.session.ID)
		meta = Metadata{{Key: MetaSessionID, Value: id}}
	}
	events, err := c.prov.CallTool(ctx, name, args, meta)
	if err != nil {
		return nil, err
	}
	if n := len(events); n > 0 && events[n-1].Err != nil && events[n-1].Err.Kind == KindSessionNotFound && c.session != nil {
		c.log = append(c.log, "session "+c.session.ID+" lost: "+events[n-1].Err.Error())
		c.session = nil
	}
	return events, nil
}

// lost forgets the instance and session a stopped call left behind: a
// guest stopped mid-call cannot be entered again, so its session can be
// neither used nor closed (the log says so), and the next call starts on
// a fresh instance with a new session.
func (c *Component) lost(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != nil {
		// One line: a trap's message carries its wasm backtrace after it.
		msg, _, _ := strings.Cut(cause.Error(), "\n")
		c.log = append(c.log, "session "+c.session.ID+" lost: "+msg)
		c.session = nil
	}
	c.inst, c.prov = nil, nil
	if c.o.Drop != nil {
		c.o.Drop()
	}
}

func (c *Component) ready(ctx context.Context) error {
	if c.prov != nil {
		return nil
	}
	inst, err := c.o.Instance(ctx)
	if err != nil {
		return err
	}
	p, err := Bind(inst)
	if err != nil {
		return err
	}
	c.inst, c.prov = inst, p
	return nil
}

// open checks the configured args against the component's args schema
// and opens a session with them.
func (c *Component) open(ctx context.Context) (Session, error) {
	schema, err := c.prov.OpenSessionArgsSchema(ctx, nil)
	if err != nil {
		return Session{}, err
	}
	cfg, secrets, err := c.resolveSecrets()
	if err != nil {
		return Session{}, err
	}
	argsJSON, err := json.Marshal(cfg)
	if err != nil {
		return Session{}, err
	}
	if strings.TrimSpace(schema) != "" {
		s, err := compileSchema("act:"+c.o.Name+"/open-session", schema)
		if err != nil {
			return Session{}, fmt.Errorf("%w: component %q open-session args schema: %w", ErrSchema, c.o.Name, err)
		}
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(argsJSON))
		if err := s.Validate(v); err != nil {
			msg := err.Error()
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				msg = oneLine(ve)
			}
			msg = secrets.Replace(msg)
			return Session{}, &Error{Kind: KindInvalidArgs, Message: Localized{Plain: fmt.Sprintf("the session args from artifacts[%s].config do not match the component's open-session schema: %s", c.o.Name, msg)}}
		}
	}
	args, err := sessionArgs(cfg)
	if err != nil {
		return Session{}, err
	}
	s, err := c.prov.OpenSession(ctx, args, nil)
	if err != nil {
		// The component's own message may quote what it was handed.
		var e *Error
		if errors.As(err, &e) {
			e.Message = redact(e.Message, secrets)
		} else {
			err = errors.New(secrets.Replace(err.Error()))
		}
		c.log = append(c.log, "open-session failed: "+secrets.Replace(err.Error()))
		return Session{}, err
	}
	c.log = append(c.log, "session "+s.ID+" opened")
	return s, nil
}

// credRef matches a credential reference, ${NAME}: the form
// gateway.api_key takes (manifest.CredentialRef).
var credRef = regexp.MustCompile(`^\$\{([A-Z_][A-Z0-9_]*)\}$`)

// resolveSecrets returns the session args with each top-level ${NAME}
// value replaced by its credential, and a replacer that puts the
// reference back wherever a value could be echoed (a schema message, the
// component's own error, the log).
func (c *Component) resolveSecrets() (map[string]any, *strings.Replacer, error) {
	cfg := make(map[string]any, len(c.o.SessionArgs))
	var pairs []string
	for k, v := range c.o.SessionArgs {
		cfg[k] = v
		s, ok := v.(string)
		if !ok || c.o.Secret == nil {
			continue
		}
		m := credRef.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		val, err := c.o.Secret(m[1])
		if err != nil {
			return nil, nil, &Error{Kind: KindCapabilityDenied, Message: Localized{Plain: fmt.Sprintf("the session arg %q of artifacts[%s].config names the credential %s, which does not resolve: %v", k, c.o.Name, s, err)}}
		}
		cfg[k] = val
		if val != "" {
			pairs = append(pairs, val, s)
		}
	}
	return cfg, strings.NewReplacer(pairs...), nil
}

func redact(l Localized, r *strings.Replacer) Localized {
	out := Localized{Plain: r.Replace(l.Plain)}
	for _, t := range l.Tags {
		out.Tags = append(out.Tags, [2]string{t[0], r.Replace(t[1])})
	}
	return out
}

// sessionArgs turns the config object into open-session metadata, keys
// sorted so the call is the same from run to run.
func sessionArgs(cfg map[string]any) (Metadata, error) {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var m Metadata
	for _, k := range keys {
		j, err := json.Marshal(cfg[k])
		if err != nil {
			return nil, err
		}
		v, err := JSONToCBOR(j)
		if err != nil {
			return nil, fmt.Errorf("session arg %q: %w", k, err)
		}
		m = append(m, Entry{Key: k, Value: v})
	}
	return m, nil
}

// Close closes the open session, if any; the instance's owner drops the
// instance after it. It is called whatever the session's outcome
// (success, failure, cancel): the spec has the host close every session
// it opened before the component goes, so close-session runs on a
// context of its own. Later calls are refused.
func (c *Component) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return c.closeSession()
}

func (c *Component) closeSession() error {
	if c.session == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.o.CloseTimeout)
	defer cancel()
	id := c.session.ID
	c.session = nil
	if err := c.prov.CloseSession(ctx, id); err != nil {
		c.log = append(c.log, "close-session "+id+" failed: "+err.Error())
		return err
	}
	c.log = append(c.log, "session "+id+" closed")
	return nil
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindInternal, Message: Localized{Plain: err.Error()}}
}

// refusal is what the model reads when the host refuses a call before the
// component runs.
func refusal(kind, msg string) agent.Result {
	return agent.Result{Status: agent.StatusFailed, Summary: kind, Data: kind + ": " + msg + "\n" + kindHint(kind)}
}

// kindHint tells the model what a well-known error kind means for its
// next step.
func kindHint(kind string) string {
	switch kind {
	case KindInvalidArgs:
		return "The arguments were refused; correct them against the tool's input schema and call again."
	case KindNotFound:
		return "What the call named does not exist; check the name or list what exists first."
	case KindTimeout:
		return "The tool ran out of time; a retry may succeed, or ask for less at once."
	case KindCapabilityDenied:
		return "The capsule's capabilities do not allow this; do not retry it, choose another way."
	case KindSessionNotFound:
		return "The tool's session was lost; the next call opens a new one, so earlier state is gone."
	case KindInternal:
		return "The tool failed internally; retrying the same call is unlikely to help."
	}
	return "The tool reported an error of its own kind."
}

// route turns the events into what the model reads: text and JSON
// inline, CBOR as JSON, anything else (images, opaque bytes) as a file
// in the session's records with a line naming it. A terminal error makes
// the call failed, its kind and message last.
func (c *Component) route(name string, events []Event) (agent.Result, error) {
	var sb strings.Builder
	res := agent.Result{Status: agent.StatusPassed}
	line := func(s string) {
		if sb.Len() > 0 && !strings.HasSuffix(sb.String(), "\n") {
			sb.WriteByte('\n')
		}
		sb.WriteString(s)
	}
	for i, ev := range events {
		if ev.Err != nil {
			res.Status = agent.StatusFailed
			res.Summary = ev.Err.Kind
			line(ev.Err.Kind + ": " + ev.Err.Message.Resolve(c.o.Language, c.o.Info.DefaultLanguage) + "\n" + kindHint(ev.Err.Kind))
			break
		}
		p := ev.Content
		mt, _, _ := mime.ParseMediaType(p.MimeType)
		switch {
		case strings.HasPrefix(mt, "text/"):
			line(string(p.Data))
		case mt == "application/json" && json.Valid(p.Data):
			line(string(p.Data))
		case mt == "application/cbor":
			if j, err := CBORToJSON(p.Data); err == nil {
				line(string(j))
				continue
			}
			fallthrough
		default:
			path, err := c.writeFile(name, i, p)
			if err != nil {
				return agent.Result{}, err
			}
			shown := p.MimeType
			if shown == "" {
				shown = defaultMimeOctetBytes
			}
			line(fmt.Sprintf("[%s output %d: %d bytes of %s saved as %s]", name, i+1, len(p.Data), shown, path))
			// An image also travels as an image, for a transport that
			// carries one (internal/mcp's image items), under
			// context.images there.
			if mt, ok := images.Detect(p.MimeType, p.Data); ok {
				res.Images = append(res.Images, images.Image{MediaType: mt, Data: p.Data})
			}
		}
	}
	res.Data = sb.String()
	return res, nil
}

// writeFile saves one content part under Files()/act/.
func (c *Component) writeFile(name string, i int, p *ContentPart) (string, error) {
	if c.o.Files == nil {
		return "", fmt.Errorf("ACT component %q returned %s content and this host has no folder for files", c.o.Name, p.MimeType)
	}
	dir := filepath.Join(c.o.Files(), "act")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	c.mu.Lock()
	c.files++
	n := c.files
	c.mu.Unlock()
	ext := ".bin"
	if mt, _, err := mime.ParseMediaType(p.MimeType); err == nil {
		if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
			ext = exts[0]
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d-%d%s", name, n, i+1, ext))
	if err := os.WriteFile(path, p.Data, 0o644); err != nil {
		return "", err
	}
	return path, nil
}
