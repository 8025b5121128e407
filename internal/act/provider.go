package act

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/wasm/cm"
)

// The interfaces this host calls, at exactly these versions: the sync
// mirrors of spec 003's compatibility tier. The canonical async
// interfaces are recognised only to refuse them (see ErrAsync).
const (
	IfaceToolsSync     = "act:tools-sync/tool-provider-sync@0.1.0"
	IfaceSessionsSync  = "act:sessions-sync/session-provider-sync@0.1.0"
	IfaceToolsAsync    = "act:tools/tool-provider@0.2.0"
	IfaceSessionsAsync = "act:sessions/session-provider@0.2.0"
)

// ErrAsync means a component exports only the async act:tools interface,
// which the wasmtime C API this build links cannot call (docs/act.md).
var ErrAsync = errors.New("ACT component exports only the async tool-provider")

// ErrNotACT means a component exports no ACT tool provider.
var ErrNotACT = errors.New("not an ACT component")

// ErrComponent means a component returned a value that is not of the ACT
// shape.
var ErrComponent = errors.New("ACT component returned a malformed value")

// Entry is one metadata pair: a namespaced key and a CBOR value.
type Entry struct {
	Key   string
	Value []byte
}

// Metadata is act:core's metadata.
type Metadata []Entry

// Get returns the value of the first entry named key.
func (m Metadata) Get(key string) ([]byte, bool) {
	for _, e := range m {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// Localized is act:core's localized-string: Plain, or text by BCP 47 tag.
type Localized struct {
	Plain string
	Tags  [][2]string
}

// Resolve picks the text for lang: an exact tag, then the same primary
// language (en for en-GB), then def (the component's default language),
// then the first entry. A plain string is returned as is.
func (l Localized) Resolve(lang, def string) string {
	if len(l.Tags) == 0 {
		return l.Plain
	}
	primary := func(t string) string { p, _, _ := strings.Cut(strings.ToLower(t), "-"); return p }
	for _, want := range []string{lang, def} {
		if want == "" {
			continue
		}
		for _, t := range l.Tags {
			if strings.EqualFold(t[0], want) {
				return t[1]
			}
		}
		for _, t := range l.Tags {
			if primary(t[0]) == primary(want) {
				return t[1]
			}
		}
	}
	return l.Tags[0][1]
}

// Error is act:core's error record; well-known kinds are the Kind*
// constants.
type Error struct {
	Kind     string
	Message  Localized
	Metadata Metadata
}

func (e *Error) Error() string { return e.Kind + ": " + e.Message.Resolve("", "") }

// The well-known error kinds of act:core.
const (
	KindNotFound          = "std:not-found"
	KindInvalidArgs       = "std:invalid-args"
	KindTimeout           = "std:timeout"
	KindCapabilityDenied  = "std:capability-denied"
	KindInternal          = "std:internal"
	KindSessionNotFound   = "std:session-not-found"
	MetaSessionID         = "std:session-id"
	MetaReadOnly          = "std:read-only"
	MetaTimeoutMS         = "std:timeout-ms"
	defaultMimeOctetBytes = "application/octet-stream"
)

// ToolDefinition is act:tools' tool-definition.
type ToolDefinition struct {
	Name             string
	Description      Localized
	ParametersSchema string
	Metadata         Metadata
}

// ContentPart is act:tools' content-part; MimeType is "" when absent.
type ContentPart struct {
	Data     []byte
	MimeType string
	Metadata Metadata
}

// Event is one tool-event: Content or Err (terminal).
type Event struct {
	Content *ContentPart
	Err     *Error
}

// Session is act:sessions' session record.
type Session struct {
	ID       string
	Metadata Metadata
}

// Provider calls an instantiated ACT component's tool provider and, when
// it exports one, its session provider. Calls must not overlap: an
// instance is single-threaded.
type Provider struct {
	name                                  string
	listTools, callTool                   *cm.Func
	argsSchema, openSession, closeSession *cm.Func
}

// Bind resolves inst's ACT exports. A component that exports only the
// async interfaces is refused with ErrAsync; one with no ACT export with
// ErrNotACT.
func Bind(inst *component.Instance) (*Provider, error) {
	p := &Provider{name: inst.Name}
	has := map[string]bool{}
	for _, e := range inst.Exports() {
		has[e.Name] = true
	}
	switch {
	case has[IfaceToolsSync]:
	case has[IfaceToolsAsync]:
		return nil, fmt.Errorf("%w: component %q exports %s; this build calls only the sync mirror %s: see docs/act.md", ErrAsync, inst.Name, IfaceToolsAsync, IfaceToolsSync)
	default:
		return nil, fmt.Errorf("%w: component %q exports neither %s nor %s", ErrNotACT, inst.Name, IfaceToolsSync, IfaceToolsAsync)
	}
	var err error
	if p.listTools, err = inst.Func(IfaceToolsSync, "list-tools"); err != nil {
		return nil, err
	}
	if p.callTool, err = inst.Func(IfaceToolsSync, "call-tool"); err != nil {
		return nil, err
	}
	switch {
	case has[IfaceSessionsSync]:
		for fn, dst := range map[string]**cm.Func{"get-open-session-args-schema": &p.argsSchema, "open-session": &p.openSession, "close-session": &p.closeSession} {
			if *dst, err = inst.Func(IfaceSessionsSync, fn); err != nil {
				return nil, err
			}
		}
	case has[IfaceSessionsAsync]:
		return nil, fmt.Errorf("%w: component %q exports %s; this build calls only the sync mirror %s: see docs/act.md", ErrAsync, inst.Name, IfaceSessionsAsync, IfaceSessionsSync)
	}
	return p, nil
}

// HasSessions reports whether the component exports a session provider.
func (p *Provider) HasSessions() bool { return p.openSession != nil }

// ListTools calls list-tools(metadata).
func (p *Provider) ListTools(ctx context.Context, meta Metadata) (Metadata, []ToolDefinition, error) {
	v, err := p.listTools.Call(ctx, lowerMeta(meta))
	if err != nil {
		return nil, nil, fmt.Errorf("component %q list-tools: %w", p.name, err)
	}
	ok, payload, err := liftResult(v)
	if err != nil {
		return nil, nil, p.malformed("list-tools", err)
	}
	if !ok {
		e, err := liftError(payload)
		if err != nil {
			return nil, nil, p.malformed("list-tools", err)
		}
		return nil, nil, e
	}
	rm, _ := payload.Field("metadata")
	respMeta, err := liftMeta(rm)
	if err != nil {
		return nil, nil, p.malformed("list-tools", err)
	}
	tv, _ := payload.Field("tools")
	var defs []ToolDefinition
	for _, t := range tv.List() {
		var d ToolDefinition
		var e1, e2, e3, e4 error
		d.Name, e1 = str(t, "name")
		dv, _ := t.Field("description")
		d.Description, e2 = liftLocalized(dv)
		d.ParametersSchema, e3 = str(t, "parameters-schema")
		mv, _ := t.Field("metadata")
		d.Metadata, e4 = liftMeta(mv)
		if err := errors.Join(e1, e2, e3, e4); err != nil {
			return nil, nil, p.malformed("list-tools", err)
		}
		defs = append(defs, d)
	}
	return respMeta, defs, nil
}

// CallTool calls call-tool(name, arguments, metadata) and returns its
// events up to and including a terminal error.
func (p *Provider) CallTool(ctx context.Context, name string, args []byte, meta Metadata) ([]Event, error) {
	v, err := p.callTool.Call(ctx, cm.String(name), cm.Bytes(args), lowerMeta(meta))
	if err != nil {
		return nil, fmt.Errorf("component %q call-tool %q: %w", p.name, name, err)
	}
	var events []Event
	for _, ev := range v.List() {
		payload, _ := ev.Payload()
		switch ev.Str() {
		case "content":
			c, err := liftContent(payload)
			if err != nil {
				return nil, p.malformed("call-tool", err)
			}
			events = append(events, Event{Content: &c})
		case "error":
			e, err := liftError(payload)
			if err != nil {
				return nil, p.malformed("call-tool", err)
			}
			// error is terminal: whatever follows it is not read.
			return append(events, Event{Err: e}), nil
		default:
			return nil, p.malformed("call-tool", fmt.Errorf("tool-event case %q", ev.Str()))
		}
	}
	return events, nil
}

// OpenSessionArgsSchema calls get-open-session-args-schema(metadata).
func (p *Provider) OpenSessionArgsSchema(ctx context.Context, meta Metadata) (string, error) {
	v, err := p.argsSchema.Call(ctx, lowerMeta(meta))
	if err != nil {
		return "", fmt.Errorf("component %q get-open-session-args-schema: %w", p.name, err)
	}
	ok, payload, err := liftResult(v)
	if err != nil {
		return "", p.malformed("get-open-session-args-schema", err)
	}
	if !ok {
		e, err := liftError(payload)
		if err != nil {
			return "", p.malformed("get-open-session-args-schema", err)
		}
		return "", e
	}
	if payload.Kind() != cm.KindString {
		return "", p.malformed("get-open-session-args-schema", fmt.Errorf("the schema is a %s, not a string", payload.Kind()))
	}
	return payload.Str(), nil
}

// OpenSession calls open-session(args, metadata).
func (p *Provider) OpenSession(ctx context.Context, args, meta Metadata) (Session, error) {
	v, err := p.openSession.Call(ctx, lowerMeta(args), lowerMeta(meta))
	if err != nil {
		return Session{}, fmt.Errorf("component %q open-session: %w", p.name, err)
	}
	ok, payload, err := liftResult(v)
	if err != nil {
		return Session{}, p.malformed("open-session", err)
	}
	if !ok {
		e, err := liftError(payload)
		if err != nil {
			return Session{}, p.malformed("open-session", err)
		}
		return Session{}, e
	}
	id, err := str(payload, "id")
	if err != nil || id == "" {
		return Session{}, p.malformed("open-session", fmt.Errorf("the session has no id"))
	}
	mv, _ := payload.Field("metadata")
	m, err := liftMeta(mv)
	if err != nil {
		return Session{}, p.malformed("open-session", err)
	}
	return Session{ID: id, Metadata: m}, nil
}

// CloseSession calls close-session(id). The component swallows its own
// errors; what comes back is a trap or a deadline.
func (p *Provider) CloseSession(ctx context.Context, id string) error {
	if _, err := p.closeSession.Call(ctx, cm.String(id)); err != nil {
		return fmt.Errorf("component %q close-session %q: %w", p.name, id, err)
	}
	return nil
}

func (p *Provider) malformed(fn string, err error) error {
	return fmt.Errorf("%w: component %q %s: %w", ErrComponent, p.name, fn, err)
}

func lowerMeta(m Metadata) cm.Val {
	elems := make([]cm.Val, len(m))
	for i, e := range m {
		elems[i] = cm.Tuple(cm.String(e.Key), cm.Bytes(e.Value))
	}
	return cm.List(elems...)
}

func liftMeta(v cm.Val) (Metadata, error) {
	if v.Kind() != cm.KindList {
		return nil, fmt.Errorf("metadata is a %s, not a list", v.Kind())
	}
	var m Metadata
	for _, t := range v.List() {
		pair := t.List()
		if len(pair) != 2 || pair[0].Kind() != cm.KindString {
			return nil, fmt.Errorf("a metadata entry is not a (string, cbor) tuple")
		}
		b, ok := pair[1].Bytes()
		if !ok {
			return nil, fmt.Errorf("metadata %q: the value is not bytes", pair[0].Str())
		}
		m = append(m, Entry{Key: pair[0].Str(), Value: append([]byte(nil), b...)})
	}
	return m, nil
}

func liftLocalized(v cm.Val) (Localized, error) {
	payload, _ := v.Payload()
	switch v.Str() {
	case "plain":
		if payload.Kind() != cm.KindString {
			return Localized{}, fmt.Errorf("localized-string plain is not a string")
		}
		return Localized{Plain: payload.Str()}, nil
	case "localized":
		var l Localized
		for _, t := range payload.List() {
			pair := t.List()
			if len(pair) != 2 {
				return Localized{}, fmt.Errorf("localized-string entry is not a pair")
			}
			l.Tags = append(l.Tags, [2]string{pair[0].Str(), pair[1].Str()})
		}
		if len(l.Tags) == 0 {
			return Localized{}, fmt.Errorf("localized-string has no entry")
		}
		return l, nil
	}
	return Localized{}, fmt.Errorf("localized-string case %q", v.Str())
}

func liftError(v cm.Val) (*Error, error) {
	kind, err := str(v, "kind")
	if err != nil {
		return nil, err
	}
	mv, _ := v.Field("message")
	msg, err := liftLocalized(mv)
	if err != nil {
		return nil, err
	}
	md, _ := v.Field("metadata")
	meta, err := liftMeta(md)
	if err != nil {
		return nil, err
	}
	return &Error{Kind: kind, Message: msg, Metadata: meta}, nil
}

func liftContent(v cm.Val) (ContentPart, error) {
	dv, _ := v.Field("data")
	data, ok := dv.Bytes()
	if !ok {
		return ContentPart{}, fmt.Errorf("content-part data is not bytes")
	}
	c := ContentPart{Data: append([]byte(nil), data...)}
	if mv, _ := v.Field("mime-type"); mv.IsSome() {
		s, _ := mv.Payload()
		c.MimeType = s.Str()
	}
	md, _ := v.Field("metadata")
	meta, err := liftMeta(md)
	if err != nil {
		return ContentPart{}, err
	}
	c.Metadata = meta
	return c, nil
}

func liftResult(v cm.Val) (ok bool, payload cm.Val, err error) {
	if v.Kind() != cm.KindResult {
		return false, cm.Val{}, fmt.Errorf("a %s where a result was expected", v.Kind())
	}
	payload, _ = v.Payload()
	return v.IsOK(), payload, nil
}

func str(rec cm.Val, field string) (string, error) {
	f, ok := rec.Field(field)
	if !ok || f.Kind() != cm.KindString {
		return "", fmt.Errorf("field %q is missing or not a string", field)
	}
	return f.Str(), nil
}

// CompileError explains a compile failure of an ACT component: one built
// against the canonical async WIT fails because the engine cannot enable
// the component-model async feature, and says so with ErrAsync.
func CompileError(name string, err error) error {
	if err != nil && strings.Contains(err.Error(), "requires the component model async feature") {
		return fmt.Errorf("%w: component %q uses async functions or stream<>, which the wasmtime C API this build links cannot run; build it against the sync mirror %s instead: see docs/act.md: %w", ErrAsync, name, IfaceToolsSync, err)
	}
	return err
}
