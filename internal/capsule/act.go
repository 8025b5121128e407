package capsule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/murmur/mur/internal/act"
	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
)

// actTools offers the tools of an ACT component: a tool artifact whose
// .wasm carries the act:component section (spec 003). ok is false for any
// other component. Its tools are listed now, on an instance with no
// grants at all (the list heads the prompt, before the session's folders
// exist); calls run on lc's instance, under the artifact's grant like
// every WASM tool, and go through the loop's one dispatch path.
func (l *launcher) actTools(e manifest.ArtifactRef, lc *lazyComponent) (tools []agent.Tool, ok bool, err error) {
	info, err := readACTSection(lc.wasm)
	switch {
	case errors.Is(err, act.ErrNoSection):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("artifact %q: %w", e.Name, err)
	}
	c, err := lc.compile()
	if err != nil {
		return nil, false, act.CompileError(e.Name, err)
	}
	defer c.Close()
	ctx := context.Background()
	lister, err := l.rt.Instantiate(ctx, c, component.Options{Name: e.Name, Limits: lc.g.limits})
	if err != nil {
		return nil, false, err
	}
	defs, err := act.List(ctx, lister)
	lister.Close()
	if err != nil {
		return nil, false, fmt.Errorf("artifact %q list-tools: %w", e.Name, err)
	}
	var args map[string]any
	if e.Config != nil {
		// Staging has refused a config that cannot travel as JSON (E-CAP-010).
		if b, err := e.Config.JSON(); err == nil {
			if err := json.Unmarshal(b, &args); err != nil {
				return nil, false, fmt.Errorf("artifact %q: config must be a mapping to become open-session args: %w", e.Name, err)
			}
		}
	}
	secret, err := l.actSecrets(e, args)
	if err != nil {
		return nil, false, err
	}
	comp, err := act.New(act.Options{Name: e.Name, Info: info, SessionArgs: args, Secret: secret,
		Instance: lc.instance, Drop: lc.drop,
		Files: func() string {
			l.dirs.mu.Lock()
			defer l.dirs.mu.Unlock()
			return l.dirs.records
		}}, defs)
	if err != nil {
		return nil, false, err
	}
	lc.instanceOnly = true
	lc.beforeClose = func() {
		if err := comp.Close(); err != nil && l.stderr != nil {
			fmt.Fprintf(l.stderr, "mur: session end: %v\n", err)
		}
		l.writeActLog(e.Name, comp.Log())
	}
	return comp.Tools(), true, nil
}

// writeActLog keeps an ACT component's session lifecycle (opened, closed,
// lost, failed) in the session's records, act/<name>.sessions.log.
func (l *launcher) writeActLog(name string, lines []string) {
	l.dirs.mu.Lock()
	records := l.dirs.records
	l.dirs.mu.Unlock()
	if len(lines) == 0 || records == "" {
		return
	}
	dir := filepath.Join(records, "act")
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, bareName(name)+".sessions.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
	if err != nil && l.stderr != nil {
		fmt.Fprintf(l.stderr, "mur: session end: artifact %q: %v\n", name, err)
	}
}

// instance makes (once) and returns the component's instance without
// resolving murmur:tool/run, for a world of another shape (ACT).
func (l *lazyComponent) instance(ctx context.Context) (*component.Instance, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ready {
		_, l.err = l.instantiate(ctx)
		l.ready = true
	}
	if l.err != nil {
		return nil, l.err
	}
	l.inst.SetHost(l.host())
	return l.inst, nil
}

// drop closes an instance a stopped call left unusable, so the next
// instance call makes a fresh one (compiled again, from the cache).
func (l *lazyComponent) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inst != nil {
		l.inst.Close()
	}
	l.inst, l.err, l.ready, l.compiled = nil, nil, false, nil
}

// actSecrets resolves the credential references among an ACT entry's
// config values (ACT-AUTH hands a component its credentials as session
// args) the way a gateway key resolves: credentials.NAME in
// ~/.murmur/config.yaml, re-read at each open-session, then the
// environment. A reference found in neither refuses the launch with
// E-MAN-003 naming the field and both places.
func (l *launcher) actSecrets(e manifest.ArtifactRef, args map[string]any) (func(string) (string, error), error) {
	creds, err := config.GlobalCredentials()
	if err != nil {
		return nil, err
	}
	resolve := func(name string) (string, error) {
		v, ok, err := creds.Credential(name)
		if err != nil {
			return "", fmt.Errorf("reading credentials.%s: %w", name, err)
		}
		if ok && v != "" {
			return v, nil
		}
		if v := osGetenv(name); v != "" {
			return v, nil
		}
		return "", errors.New(manifest.UnsetKeyMessage(e.Name, name))
	}
	idx := 0
	for i, a := range l.c.Artifacts {
		if a.Name == e.Name {
			idx = i
		}
	}
	var ds, warn diag.List
	for _, k := range slices.Sorted(maps.Keys(args)) {
		s, ok := args[k].(string)
		if !ok {
			continue
		}
		name, ok := manifest.CredentialRef(s)
		if !ok {
			continue
		}
		field := fmt.Sprintf("artifacts[%d].config.%s", idx, k)
		pos := l.c.Pos(field)
		if pos.Line == 0 {
			// A key the path syntax cannot name (std:bearer-token): the block's line.
			pos = l.c.Pos(fmt.Sprintf("artifacts[%d].config", idx))
		}
		if _, err := resolve(name); err != nil {
			ds = append(ds, diag.New(diag.ManInvalid, pos, field, err.Error()+"; the ACT component takes it as the session arg "+strconv.Quote(k)))
			continue
		}
		// Found, but not in config.yaml: from the environment, which spec
		// 004 warns of as it does for a gateway key (W-SEC-027).
		if v, ok, err := creds.Credential(name); err == nil && (!ok || v == "") {
			warn = append(warn, diag.New(diag.SecKeyFromEnv, pos, field,
				fmt.Sprintf("artifact %q takes %s from the environment, read once at launch and not rotated; set credentials.%s with mur config set -g instead", e.Name, name, name)))
		}
	}
	if len(ds) > 0 {
		return nil, refusal(append(warn, ds...))
	}
	if l.stderr != nil {
		for _, w := range warn {
			fmt.Fprintln(l.stderr, w.String())
		}
	}
	return resolve, nil
}
