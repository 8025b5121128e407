package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/diag"
)

func mustParse(t *testing.T, src string) *Capsule {
	t.Helper()
	c, ds := ParseCapsule("murmur.yaml", []byte(src))
	if c == nil || ds.HasErrors() {
		t.Fatalf("unexpected errors: %v", ds.Errors())
	}
	return c
}

func TestLoadArtifactFiles(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		link  string
		want  diag.Code
		field string
	}{
		{name: "all present", files: map[string]string{"tool.wasm": "x", "assets/logo.png": "y"}},
		{name: "missing names first", files: map[string]string{"assets/logo.png": "y"}, want: diag.IOMissingFile, field: "requires_files[0]"},
		{name: "symlink refused", files: map[string]string{"real.wasm": "x", "assets/logo.png": "y"}, link: "tool.wasm", want: diag.BldPath, field: "requires_files[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			man := "name: t\nversion: \"1\"\nruntime: tool\nrequires_files: [tool.wasm, assets/logo.png]\n"
			if err := os.WriteFile(filepath.Join(dir, "murmur.yaml"), []byte(man), 0o644); err != nil {
				t.Fatal(err)
			}
			for f, body := range tt.files {
				p := filepath.Join(dir, f)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.link != "" {
				if err := os.Symlink("real.wasm", filepath.Join(dir, tt.link)); err != nil {
					t.Fatal(err)
				}
			}
			a, ds := LoadArtifact(dir)
			if a == nil {
				t.Fatalf("no artifact: %v", ds)
			}
			if tt.want == "" {
				if len(ds) != 0 {
					t.Fatalf("want no diagnostics, got %v", ds)
				}
				return
			}
			if len(ds) != 1 || ds[0].Code != tt.want || ds[0].Field != tt.field {
				t.Fatalf("want %s %s, got %v", tt.want, tt.field, ds)
			}
			if ds[0].Pos.Line != 4 {
				t.Errorf("want line 4, got %v", ds[0].Pos)
			}
		})
	}
	if _, ds := LoadArtifact(t.TempDir()); !ds.HasErrors() {
		t.Error("a directory without murmur.yaml must be refused")
	}
}

func TestArtifactDerivations(t *testing.T) {
	tests := []struct {
		src       string
		exec      string
		files     []string
		declared  bool
		publishOK bool
	}{
		{"name: s\nversion: \"1\"\nruntime: skill\n", ExecStatic, []string{"skill.md"}, false, true},
		{"name: s\nversion: \"1\"\nruntime: skill\nrequires_files: []\n", ExecStatic, []string{}, true, true},
		{"name: t\nversion: \"1\"\nruntime: tool\nimplementation: native\nrequires_files: [t]\n", ExecNative, []string{"t"}, true, true},
		{"name: t\nversion: latest\nruntime: tool\nrequires_files: [t.wasm]\n", ExecWasm, []string{"t.wasm"}, true, false},
		{"name: t\nversion: edge\nruntime: tool\nexecution: Static\nrequires_files: [c.json]\n", ExecStatic, []string{"c.json"}, true, false},
		{"name: d\nversion: stable\nruntime: hook\nrequires_files: [h.wasm]\n", ExecWasm, []string{"h.wasm"}, true, false},
	}
	for _, tt := range tests {
		a, ds := ParseArtifact("murmur.yaml", []byte(tt.src))
		if a == nil || ds.HasErrors() {
			t.Fatalf("%q: %v", tt.src, ds)
		}
		if got := a.ExecutionType(); got != tt.exec {
			t.Errorf("%q: execution type %q, want %q", tt.src, got, tt.exec)
		}
		if !reflect.DeepEqual(a.RequiresFiles, tt.files) || a.RequiresFilesDeclared != tt.declared {
			t.Errorf("%q: requires_files %v (declared %v)", tt.src, a.RequiresFiles, a.RequiresFilesDeclared)
		}
		pub := a.CheckPublishable()
		if (len(pub) == 0) != tt.publishOK || !tt.publishOK && !pub.Has(diag.RegReservedVersion) {
			t.Errorf("%q: CheckPublishable = %v", tt.src, pub)
		}
	}
}

func TestConfigJSONKeepsOrderAndTypes(t *testing.T) {
	c := mustParse(t, "name: c\nversion: \"1\"\nartifacts:\n  - name: murmur/tool-corpus\n    version: 0.1.0\n    config:\n      types:\n        utterance:\n          schema: { type: object, required: [text] }\n      read_recent: { default: 20, max: 100 }\n      ratio: 0.5\n      on: yes\n")
	got, err := c.Artifacts[0].Config.JSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"types":{"utterance":{"schema":{"type":"object","required":["text"]}}},"read_recent":{"default":20,"max":100},"ratio":0.5,"on":"yes"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestEffectiveDefaults(t *testing.T) {
	c := mustParse(t, "name: cap\nversion: \"1\"\nartifacts:\n  - name: a/h\n    version: \"1\"\n    runtime: hook\n  - name: s\n    source: ./s.md\n    runtime: skill\n  - name: a/t\n    version: \"1\"\n    capabilities:\n      state: {}\ncapabilities:\n  limits:\n    deadline_seconds: 45\nexports:\n  peer_files:\n    root: out/\n")
	e := c.Effective()
	checks := map[string][2]any{
		"hook deadline follows the capsule-wide value": {*e.Artifacts[0].Capabilities.Limits.DeadlineSeconds, int64(45)},
		"hook has no network":                          {len(e.Artifacts[0].Capabilities.Network.Allow), 0},
		"hook on_overflow":                             {e.Artifacts[0].OnOverflow, "drop"},
		"skill local_source":                           {*e.Artifacts[1].LocalSource, true},
		"skill prompt_payload":                         {*e.Artifacts[1].PromptPayload, true},
		"record":                                       {e.Context.Record, "on"},
		"record_store is the capsule name":             {*e.Context.RecordStore, "cap"},
		"seed budget":                                  {*e.Context.SeedBudget, 0.10},
		"images max_bytes":                             {e.Context.Images.MaxBytes, "5Mi"},
		"trace capture":                                {e.Trace.Capture, "meta"},
		"task acceptance":                              {e.Lifecycle.TaskAcceptance, "single"},
		"after task":                                   {e.Lifecycle.AfterTask, "exit"},
		"queue depth":                                  {*e.Lifecycle.QueueDepth, int64(1)},
		"conversation":                                 {e.Lifecycle.Conversation, "stateless"},
		"max task reopens":                             {*e.Lifecycle.MaxTaskReopens, int64(1)},
		"delegation deadline":                          {*e.Lifecycle.DelegationDeadlineSecs, int64(600)},
		"memory bytes":                                 {*e.Capabilities.Limits.MemoryBytes, int64(536870912)},
		"workdir max":                                  {*e.Capabilities.Resources.WorkdirMaxBytes, int64(10737418240)},
		"pids":                                         {*e.Capabilities.Resources.CgroupPidsMax, int64(256)},
		"scope":                                        {*e.Capabilities.Filesystem.Scope, "."},
		"plan submit":                                  {*e.Capabilities.Plan.Submit, false},
		"peer ttl under exit":                          {e.Exports.PeerFiles.MaxTTL, "1h"},
		"peer max bytes":                               {e.Exports.PeerFiles.MaxBytes, "10Mi"},
		"state store is the capsule name":              {*e.Artifacts[2].Capabilities.State.Store, "cap"},
	}
	for name, c := range checks {
		if !reflect.DeepEqual(c[0], c[1]) {
			t.Errorf("%s: got %v, want %v", name, c[0], c[1])
		}
	}
	if e.Capabilities.Resources.CPUSeconds != nil || e.Capabilities.Resources.CgroupCPUPercent != nil {
		t.Error("cpu_seconds and cgroup_cpu_percent have no default")
	}
	if c.Lifecycle != nil || c.Context != nil {
		t.Error("Effective must not change the declared manifest")
	}
}

func TestEffectiveInference(t *testing.T) {
	c := mustParse(t, "name: c\nversion: \"1\"\nartifacts:\n  - name: murmur/d\n    version: \"1\"\n    runtime: driver\n    gateway: {endpoint: \"https://x.com\", api_key: \"${K}\"}\ninference:\n  model: m1\n  driver:\n    artifact: murmur/d\n")
	in := c.Effective().Inference
	if in.Transport != "http" || in.ToolRefresh != "compaction" || *in.Retry.MaxRetries != 6 || *in.Retry.InitialDelayMS != 1000 ||
		*in.Retry.MaxDelayMS != 60000 || *in.Compaction.Threshold != 0.98 || in.Compaction.Model != "m1" {
		t.Errorf("inference defaults wrong: %+v %+v %+v", in, in.Retry, in.Compaction)
	}
}

func TestResolveLimitsSpecTable(t *testing.T) {
	drv := func(models string) *Artifact {
		a, ds := ParseArtifact("d.yaml", []byte("name: d\nversion: \"1\"\nruntime: driver\nrequires_files: [d.wasm]\nupstream_auth: {header: x-api-key, value: \"{key}\"}\nmodels:\n"+models))
		if ds.HasErrors() {
			t.Fatal(ds)
		}
		return a
	}
	base := "name: c\nversion: \"1\"\nartifacts:\n  - name: murmur/d\n    version: \"1\"\n    runtime: driver\n    gateway: {endpoint: \"https://x.com\", api_key: \"${K}\"}\ninference:\n  model: m\n  driver:\n    artifact: murmur/d\n"
	tests := []struct {
		name, models, extra string
		budget              int64
		basis               string
		code                diag.Code
	}{
		{"ceiling wins", "  m: {context_window: 1050000, max_output_tokens: 128000, max_input_tokens: 922000}\n", "", 922000, "max_input_tokens", ""},
		{"manifest cap", "  m: {context_window: 1050000, max_output_tokens: 128000}\n", "  max_tokens: 6000\n", 1044000, "context_window_less_output_cap", ""},
		{"manifest window and cap", "  m: {context_window: 1050000, max_output_tokens: 128000, max_input_tokens: 922000}\n", "  max_tokens: 8192\ncontext:\n  max_tokens: 200000\n", 191808, "context_window_less_output_cap", ""},
		{"no input budget", "  m: {context_window: 1000000, max_output_tokens: 8192}\n", "  max_tokens: 200000\ncontext:\n  max_tokens: 200000\n", 0, "", diag.RunNoInputBudget},
		{"tie goes to the ceiling", "  m: {context_window: 1000, max_output_tokens: 100, max_input_tokens: 900}\n", "", 900, "max_input_tokens", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, base+tt.extra)
			lims, ds := ResolveLimits(c, InstalledMap{"murmur/d": drv(tt.models)})
			if tt.code != "" {
				if !ds.Has(tt.code) {
					t.Fatalf("want %s, got %v", tt.code, ds)
				}
				return
			}
			if len(ds) != 0 || len(lims) != 1 {
				t.Fatalf("unexpected: %v %v", lims, ds)
			}
			if lims[0].Budget != tt.budget || lims[0].Basis != tt.basis {
				t.Errorf("budget %d (%s), want %d (%s)", lims[0].Budget, lims[0].Basis, tt.budget, tt.basis)
			}
			if half, specRow := map[int64]int64{922000: 461000, 1044000: 522000, 191808: 95904}[tt.budget]; specRow && tt.budget/2 != half {
				t.Errorf("threshold 0.5 row mismatch")
			}
		})
	}
}

func TestNetEntryCovers(t *testing.T) {
	tests := []struct {
		ceiling, decl string
		want          bool
	}{
		{"api.example.com", "https://api.example.com", true},
		{"api.example.com", "api.example.com:8443", true},
		{"https://api.example.com", "api.example.com", false},
		{"https://api.example.com", "https://api.example.com:443", true},
		{"https://api.example.com", "http://api.example.com", false},
		{"api.example.com:443", "https://api.example.com", true},
		{"localhost:11434", "http://localhost:11434", true},
		{"API.example.com", "api.example.com", true},
	}
	for _, tt := range tests {
		c, err1 := ParseNetEntry(tt.ceiling)
		d, err2 := ParseNetEntry(tt.decl)
		if err1 != nil || err2 != nil {
			t.Fatalf("%v %v", err1, err2)
		}
		if got := c.Covers(d); got != tt.want {
			t.Errorf("%s covers %s = %v, want %v", tt.ceiling, tt.decl, got, tt.want)
		}
	}
}

// done_check.command is split by the shell's own splitter: validation
// reads the same words the runtime runs.
func TestDoneCheckArgv(t *testing.T) {
	tests := map[string][]string{
		"cargo test --quiet":          {"cargo", "test", "--quiet"},
		`bash -c 'make && make test'`: {"bash", "-c", "make && make test"},
		`a "b c" d\ e`:                {"a", "b c", "d e"},
		`x ""`:                        {"x", ""},
		"  spaced   out  ":            {"spaced", "out"},
		`echo $HOME`:                  {"echo", "$HOME"},
	}
	for in, want := range tests {
		got, err := (&DoneCheck{Command: in}).Argv()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Argv(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := (&DoneCheck{Command: `a "b`}).Argv(); err == nil {
		t.Error("unterminated quote must fail")
	}
}

func TestExplainScopeNarrowing(t *testing.T) {
	c, _ := ParseCapsule("murmur.yaml", []byte("name: c\nversion: \"1\"\ncapabilities:\n  network:\n    allow: [https://api.example.com]\nartifacts:\n  - name: a/t\n    version: \"1\"\n    capabilities:\n      network:\n        allow: [https://api.example.com, https://evil.example.com]\n  - name: a/s\n    version: \"1\"\n    runtime: skill\n  - name: a/h\n    version: \"1\"\n    runtime: hook\n"))
	s := ExplainScope(c)
	if got := s.Artifacts[0].Network; !reflect.DeepEqual(got, []string{"https://api.example.com"}) {
		t.Errorf("narrowed grant = %v", got)
	}
	if !s.Artifacts[1].ModelVisible || s.Artifacts[2].ModelVisible {
		t.Error("skills are model-visible, hooks are not")
	}
	if s.Artifacts[2].Network == nil || len(s.Artifacts[2].Network) != 0 || s.Artifacts[2].Inherits {
		t.Error("a hook without capabilities has no network")
	}
}

func TestMessagesQuoteSpec(t *testing.T) {
	tests := []struct{ src, want string }{
		{"name: c\nversion: \"1\"\nartifacts:\n  - name: ana/house-style\n    source: ./s.md\n    runtime: skill\n", "drop the scope: name it 'house-style'"},
		{"name: c\nversion: \"1\"\nartifacts:\n  - name: my-tool\n    source: ./t\n", "artifact 'my-tool' declares 'source:' but does not declare 'local_source: true' (runtime: tool)"},
		{"name: c\nversion: \"1\"\nartifacts:\n  - name: murmur/driver-anthropic\n    version: \"1\"\n    runtime: driver\ninference:\n  model: m\n  driver:\n    artifact: driver-anthropic\n", "artifact 'driver-anthropic' is not declared in artifacts: (the declared 'murmur/driver-anthropic' has that name; refer to it as 'murmur/driver-anthropic')"},
		{"name: c\nversion: \"1\"\nregistry: x\n", "'registry' is not a manifest key"},
		{"name: c\nversion: \"1\"\nlifecycle:\n  keep_working:\n    message: go\n    limit: 0\n", "invalid lifecycle config for 'lifecycle.keep_working.limit': must be at least 1; omit lifecycle.keep_working to turn the option off"},
		{"name: c\nversion: \"1\"\ninference:\n  model: m\n  endpoint: https://x.com\n  driver:\n    artifact: a/d\n", "was removed; set gateway.endpoint on the artifacts: entry 'a/d' instead"},
		{"name: c\nversion: \"1\"\nartifacts:\n  - name: a/t\n    version: \"1\"\n    gateway:\n      endpoint: https://api.example.com@127.0.0.1\n      api_key: ${K}\n", `its host is "127.0.0.1"`},
		{"name: c\nversion: \"1\"\ncapabilities:\n  install:\n    skill: [code-review]\n", "write it as '<scope>/code-review'"},
	}
	for _, tt := range tests {
		_, ds := ParseCapsule("murmur.yaml", []byte(tt.src))
		found := false
		for _, d := range ds {
			if strings.Contains(d.Msg, tt.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no message contains %q; got %v", tt.want, ds)
		}
	}
}

func TestConfigAliasBombRefused(t *testing.T) {
	src := "name: c\nversion: \"1\"\nx: &a [1,1,1,1,1,1,1,1,1,1]\n"
	prev := "a"
	for i := 0; i < 9; i++ {
		name := fmt.Sprintf("l%d", i)
		src += fmt.Sprintf("%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	src += "artifacts:\n  - name: a/t\n    version: \"1\"\n    config:\n      big: *" + prev + "\n"
	_, ds := ParseCapsule("murmur.yaml", []byte(src))
	if !ds.Has(diag.CapConfigShape) {
		t.Fatalf("want E-CAP-010, got %v", ds)
	}
}

func TestCheckPromptFiles(t *testing.T) {
	dir := t.TempDir()
	src := "name: c\nversion: \"1\"\nartifacts:\n  - name: a/d\n    version: \"1\"\n    runtime: driver\n    gateway: {endpoint: \"https://x.com\", keyless: true}\ninference:\n  model: m\n  system_prompt_file: conventions.md\n  driver: {artifact: a/d}\n  compaction:\n    system_prompt_file: compact.md\n"
	path := filepath.Join(dir, "murmur.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, ds := LoadCapsule(path)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	ds = CheckPromptFiles(c)
	if len(ds) != 2 || !ds.Has(diag.RunPromptFile) || ds[0].Field != "inference.system_prompt_file" {
		t.Fatalf("want two E-RUN-009, got %v", ds)
	}
	for _, f := range []string{"conventions.md", "compact.md"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ds := CheckPromptFiles(c); len(ds) != 0 {
		t.Fatalf("files present, got %v", ds)
	}
}
