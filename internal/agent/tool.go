package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Tool kinds.
const (
	KindTool    = "tool"    // a WASM tool component
	KindSkill   = "skill"   // runtime: skill; calling it returns its skill.md
	KindShell   = "shell"   // a capabilities.shell.allow binary
	KindNative  = "native"  // a native tool
	KindRuntime = "runtime" // a tool the runtime itself provides
)

// Tool is anything the model may call. WASM tools, skills, shell tools,
// native tools and runtime tools all implement it, so every call goes
// through the same checks, trace lines and result handling.
type Tool interface {
	Def() ToolDef
	Call(ctx context.Context, input json.RawMessage) (Result, error)
}

// skill is a runtime: skill artifact offered as a tool with no input.
type skill struct {
	def  ToolDef
	body string
}

// NewSkill returns the tool for a skill: offered with no input parameters,
// and calling it returns its skill.md.
func NewSkill(name, description, skillMD string) Tool {
	return &skill{
		def: ToolDef{
			Name:        name,
			Description: description,
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			Kind:        KindSkill,
		},
		body: skillMD,
	}
}

func (s *skill) Def() ToolDef { return s.def }

func (s *skill) Call(context.Context, json.RawMessage) (Result, error) {
	return Result{Status: StatusPassed, Data: s.body, Metadata: [][2]string{{MetaStateEffect, "read"}, {MetaResourceID, "skill:" + s.def.Name}}}, nil
}

// Inventory is the tool list of a session: the definitions handed to the
// driver, sorted by name so the list (which heads the prompt a provider
// caches) is byte-identical from call to call. A running session may add
// and remove tools (capabilities.install); a tool is callable from the
// moment it is added, and the loop decides when the model is offered the
// changed list (inference.tool_refresh).
type Inventory struct {
	mu     sync.RWMutex
	byName map[string]Tool
	defs   []ToolDef
	// gen counts changes to the installed set; agentGen is gen as of the
	// last change the model made itself (pull-artifact, remove-artifact).
	gen, agentGen uint64
}

// NewInventory builds the inventory; two tools of one name are refused,
// since the model could not tell which it calls.
func NewInventory(tools []Tool) (*Inventory, error) {
	inv := &Inventory{byName: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		if err := inv.put(t); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

func (inv *Inventory) put(t Tool) error {
	d := t.Def()
	if d.Name == "" {
		return fmt.Errorf("tool inventory: a tool has no name")
	}
	if _, dup := inv.byName[d.Name]; dup {
		return fmt.Errorf("tool inventory: two tools are named %q", d.Name)
	}
	if len(d.InputSchema) == 0 {
		d.InputSchema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	inv.byName[d.Name] = t
	i := sort.Search(len(inv.defs), func(i int) bool { return inv.defs[i].Name >= d.Name })
	inv.defs = slices.Insert(inv.defs, i, d)
	return nil
}

// Add installs t while the session runs; byAgent marks a change the model
// made itself, which its next call is offered whatever tool_refresh says.
func (inv *Inventory) Add(t Tool, byAgent bool) error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if err := inv.put(t); err != nil {
		return err
	}
	inv.changed(byAgent)
	return nil
}

// Remove uninstalls the tool named name; false when there is none.
func (inv *Inventory) Remove(name string, byAgent bool) bool {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if _, ok := inv.byName[name]; !ok {
		return false
	}
	delete(inv.byName, name)
	inv.defs = slices.DeleteFunc(inv.defs, func(d ToolDef) bool { return d.Name == name })
	inv.changed(byAgent)
	return true
}

func (inv *Inventory) changed(byAgent bool) {
	inv.gen++
	if byAgent {
		inv.agentGen = inv.gen
	}
}

// snapshot is the current list with the generation it is of, and the
// generation of the model's own last change.
func (inv *Inventory) snapshot() (defs []ToolDef, gen, agentGen uint64) {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return slices.Clone(inv.defs), inv.gen, inv.agentGen
}

// Defs returns the tool definitions in offer order, as installed now.
func (inv *Inventory) Defs() []ToolDef {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return slices.Clone(inv.defs)
}

// Redescribe replaces the description, and the input schema when schema
// is not empty, that the model is offered for the tool named name (an
// on-stage hook's write-manifests); false when there is none. It is called
// before the loop offers anything.
func (inv *Inventory) Redescribe(name, description string, schema json.RawMessage) bool {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for i := range inv.defs {
		if inv.defs[i].Name == name {
			inv.defs[i].Description = description
			if len(schema) > 0 {
				inv.defs[i].InputSchema = schema
			}
			return true
		}
	}
	return false
}

// Lookup returns the tool named name.
func (inv *Inventory) Lookup(name string) (Tool, bool) {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	t, ok := inv.byName[name]
	return t, ok
}

// MissingRequired returns the names in schema's top-level "required" that
// are not keys of input. Only presence is checked: not types, values or
// nested objects. An input that is not a JSON object misses every name.
func MissingRequired(schema, input json.RawMessage) []string {
	var s struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Required) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil {
		obj = nil
	}
	var missing []string
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, name)
		}
	}
	return missing
}

// RefusalText is the failed tool result a call missing required fields
// hands the model, exactly as the spec words it.
func RefusalText(tool string, required, missing []string) string {
	q := func(names []string) string {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = `"` + n + `"`
		}
		return strings.Join(parts, ", ")
	}
	field := "field"
	if len(missing) > 1 {
		field = "fields"
	}
	return fmt.Sprintf("%s: missing required %s %s\n\nThis call did not run. %s's input_schema requires: %s. Call it again with every one of them present. Only the presence of required fields is checked before a call runs — not their types, allowed values or nested contents.",
		tool, field, q(missing), tool, q(required))
}

// requiredOf returns a schema's top-level required list.
func requiredOf(schema json.RawMessage) []string {
	var s struct {
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &s)
	return s.Required
}
