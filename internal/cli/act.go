package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/act"
	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// actExports checks a runtime: tool component as an ACT component. isACT
// is false when it neither carries the act:component section nor exports
// an ACT interface (a murmur tool); otherwise problem says what is wrong,
// or names what it exports when it is whole.
func actExports(wasm []byte, exports []cm.Import) (isACT bool, found, problem string) {
	info, err := act.ReadSection(wasm)
	var tools, async bool
	var funcs []string
	for _, e := range exports {
		switch e.Name {
		case act.IfaceToolsSync:
			tools, funcs = true, e.Funcs
		case act.IfaceToolsAsync:
			async = true
		}
	}
	switch {
	case errors.Is(err, act.ErrNoSection) && !tools && !async:
		return false, "", ""
	case errors.Is(err, act.ErrNoSection):
		return true, "", fmt.Sprintf("exports ACT interfaces but carries no %s custom section (std.name and std.version are required, spec 003); write it at build (sdk/go/act does, or act.AppendSection)", act.SectionName)
	case err != nil:
		return true, "", err.Error()
	case !tools && async:
		return true, "", fmt.Sprintf("exports only %s; this mur calls the sync mirror %s (docs/act.md)", act.IfaceToolsAsync, act.IfaceToolsSync)
	case !tools:
		return true, "", fmt.Sprintf("carries the %s section but does not export %s", act.SectionName, act.IfaceToolsSync)
	}
	var lack []string
	for _, fn := range []string{"list-tools", "call-tool"} {
		if !slices.Contains(funcs, fn) {
			lack = append(lack, fn)
		}
	}
	if len(lack) > 0 {
		return true, "", fmt.Sprintf("exports %s without %s", act.IfaceToolsSync, strings.Join(lack, ", "))
	}
	return true, fmt.Sprintf("ACT component %s %s exporting %s", info.Name, info.Version, act.IfaceToolsSync), ""
}

func init() { register(newActCmd) }

func newActCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "act",
		Short: "Try an ACT component outside a capsule: its metadata, its tools, one call",
		Example: `  mur act info kv.wasm
  mur act call kv.wasm get --args '{"key":"a"}' --session-args '{"namespace":"notes"}'`,
	}
	var infoJSON bool
	info := &cobra.Command{
		Use:   "info FILE",
		Short: "Print an ACT component's act:component section and its tools",
		Example: `  mur act info kv.wasm
  mur act info kv.wasm --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return actInfo(env, args[0], infoJSON)
		},
	}
	info.Flags().BoolVar(&infoJSON, "json", false, "print one JSON document")
	var o actCallOptions
	call := &cobra.Command{
		Use:   "call FILE TOOL",
		Short: "Call one tool of an ACT component under a deny-all policy unless flags grant more",
		Long: `mur act call runs one call of an ACT component with no filesystem, no
network and no environment: --dir grants a folder (the guest's "."),
--allow-net a network.allow entry (repeatable), --env NAME a host variable.
--args is the call's JSON arguments, checked against the tool's
parameters-schema; --session-args the open-session args of a component
with sessions (checked against its schema). The session is closed before
the command ends. Content the terminal cannot show is written to --out
(a new temporary folder by default) and named. Exit 1 when the call ends
with an error event.`,
		Example: `  mur act call kv.wasm put --args '{"key":"a","value":"1"}' --session-args '{"namespace":"notes"}'
  mur act call fetch.wasm get --args '{"url":"https://example.org"}' --allow-net example.org
  mur act call files.wasm list --dir ./data`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return actCall(env, args[0], args[1], o)
		},
	}
	call.Flags().StringVar(&o.args, "args", "{}", "the call's arguments, a JSON object")
	call.Flags().StringVar(&o.sessionArgs, "session-args", "", "open-session args, a JSON object")
	call.Flags().StringVar(&o.dir, "dir", "", "grant this folder as the guest's work folder")
	call.Flags().StringArrayVar(&o.allowNet, "allow-net", nil, "grant a network.allow entry (host, host:port, *.domain)")
	call.Flags().StringArrayVar(&o.env, "env", nil, "pass the host's variable NAME to the guest")
	call.Flags().StringVar(&o.out, "out", "", "folder for content written as files")
	call.Flags().DurationVar(&o.deadline, "deadline", 60*time.Second, "end the call after this long")
	cmd.AddCommand(info, call)
	return cmd
}

// loadACT reads FILE, its section, and compiles it in a runtime with the
// on-disk compile cache.
func loadACT(file string) (*component.Runtime, *cm.Component, act.Info, error) {
	wasm, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, act.Info{}, &ExitError{Code: ExitFailed, Err: err}
	}
	info, err := act.ReadSection(wasm)
	if err != nil {
		return nil, nil, act.Info{}, &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: %w", file, err)}
	}
	dir, err := compileCacheDir()
	if err != nil {
		return nil, nil, act.Info{}, err
	}
	rt, err := component.New(cm.Config{CacheDir: dir})
	if err != nil {
		return nil, nil, act.Info{}, err
	}
	c, err := rt.Compile(wasm)
	if err != nil {
		rt.Close()
		return nil, nil, act.Info{}, &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: %w", file, act.CompileError(info.Name, err))}
	}
	return rt, c, info, nil
}

// actToolInfo is one tool as mur act info prints it.
type actToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"parameters_schema"`
	Metadata    map[string]any  `json:"metadata,omitempty"`
}

func actInfo(env *Env, file string, asJSON bool) error {
	rt, c, info, err := loadACT(file)
	if err != nil {
		return err
	}
	defer rt.Close()
	defer c.Close()
	inst, err := rt.Instantiate(env.Ctx, c, component.Options{Name: info.Name})
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	defer inst.Close()
	p, err := act.Bind(inst)
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	_, defs, err := p.ListTools(env.Ctx, nil)
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("list-tools: %w", err)}
	}
	var tools []actToolInfo
	for _, d := range defs {
		t := actToolInfo{Name: d.Name, Description: d.Description.Resolve("", info.DefaultLanguage), Schema: json.RawMessage(d.ParametersSchema)}
		if !json.Valid(t.Schema) {
			t.Schema, _ = json.Marshal(d.ParametersSchema)
		}
		for _, e := range d.Metadata {
			if t.Metadata == nil {
				t.Metadata = map[string]any{}
			}
			if v, err := act.ToJSONValue(e.Value); err == nil {
				t.Metadata[e.Key] = v
			}
		}
		tools = append(tools, t)
	}
	if asJSON {
		return writeJSON(env.Stdout, struct {
			act.Info
			Sessions bool          `json:"sessions"`
			Tools    []actToolInfo `json:"tools"`
		}{info, p.HasSessions(), tools})
	}
	w := env.Stdout
	fmt.Fprintf(w, "%s %s\n", info.Name, info.Version)
	if d := (act.Localized{Plain: info.Description, Tags: sortedTags(info.Descriptions)}).Resolve("", info.DefaultLanguage); d != "" {
		fmt.Fprintf(w, "  %s\n", d)
	}
	if info.DefaultLanguage != "" {
		fmt.Fprintf(w, "default language: %s\n", info.DefaultLanguage)
	}
	if names := info.CapabilityNames(); len(names) > 0 {
		fmt.Fprintf(w, "capabilities: %s\n", strings.Join(names, ", "))
	}
	sessions := "no"
	if p.HasSessions() {
		sessions = "yes (" + act.IfaceSessionsSync + ")"
	}
	fmt.Fprintf(w, "sessions: %s\ntools:\n", sessions)
	for _, t := range tools {
		fmt.Fprintf(w, "  %s  %s\n    parameters: %s\n", t.Name, t.Description, compactJSON(t.Schema))
	}
	return nil
}

func sortedTags(m map[string]string) [][2]string {
	var out [][2]string
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

type actCallOptions struct {
	args, sessionArgs, dir, out string
	allowNet, env               []string
	deadline                    time.Duration
}

func actCall(env *Env, file, toolName string, o actCallOptions) error {
	var sessionArgs map[string]any
	if o.sessionArgs != "" {
		if err := json.Unmarshal([]byte(o.sessionArgs), &sessionArgs); err != nil {
			return usageError(fmt.Errorf("--session-args must be a JSON object: %w", err))
		}
	}
	if !json.Valid([]byte(o.args)) {
		return usageError(fmt.Errorf("--args is not JSON: %s", o.args))
	}
	pol := wasi.Policy{Args: []string{toolName}, Stderr: env.Stderr}
	if o.dir != "" {
		abs, err := filepath.Abs(o.dir)
		if err != nil {
			return usageError(err)
		}
		pol.Workdir, pol.Cwd = abs, "/"
	}
	if len(o.allowNet) > 0 {
		a, err := wasi.ParseAllow(o.allowNet)
		if err != nil {
			return usageError(fmt.Errorf("--allow-net: %w", err))
		}
		pol.Network = a
	}
	for _, k := range o.env {
		if v, ok := os.LookupEnv(k); ok {
			pol.Env = append(pol.Env, [2]string{k, v})
		}
	}
	rt, c, info, err := loadACT(file)
	if err != nil {
		return err
	}
	defer rt.Close()
	defer c.Close()
	ctx, cancel := context.WithTimeout(env.Ctx, o.deadline)
	defer cancel()
	lister, err := rt.Instantiate(ctx, c, component.Options{Name: info.Name})
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	defs, err := act.List(ctx, lister)
	lister.Close()
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	out := o.out
	files := func() string {
		if out == "" {
			out, _ = os.MkdirTemp("", "mur-act-")
		}
		return out
	}
	var inst *component.Instance
	comp, err := act.New(act.Options{Name: info.Name, Info: info, SessionArgs: sessionArgs, Files: files,
		Instance: func(ctx context.Context) (*component.Instance, error) {
			var err error
			inst, err = rt.Instantiate(ctx, c, component.Options{Name: info.Name, Policy: pol, Limits: cm.Limits{Deadline: o.deadline}})
			return inst, err
		}}, defs)
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	var tool agent.Tool
	for _, t := range comp.Tools() {
		if t.Def().Name == toolName {
			tool = t
		}
	}
	if tool == nil {
		var names []string
		for _, d := range defs {
			names = append(names, d.Name)
		}
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s has no tool %q; it lists: %s", file, toolName, strings.Join(names, ", "))}
	}
	res, callErr := tool.Call(ctx, json.RawMessage(o.args))
	closeErr := comp.Close()
	if inst != nil {
		inst.Close()
	}
	for _, l := range comp.Log() {
		fmt.Fprintf(env.Stderr, "mur act: %s\n", l)
	}
	if callErr != nil {
		return &ExitError{Code: ExitFailed, Err: callErr}
	}
	fmt.Fprintln(env.Stdout, res.Data)
	if closeErr != nil {
		return &ExitError{Code: ExitFailed, Err: closeErr}
	}
	if res.Status != agent.StatusPassed {
		return &ExitError{Code: ExitFailed, Silent: true}
	}
	return nil
}
