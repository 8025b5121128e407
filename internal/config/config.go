// Package config is ~/.murmur/config.yaml (global) and .murmur/config.yaml
// beside a capsule's murmur.yaml (project): where artifacts come from
// (resolution order), the registries and their credentials, the default
// publish target, and credentials.<NAME> for the credential gateway.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrConfig is the kind of every malformed-config or bad-key refusal.
var ErrConfig = errors.New("invalid config")

// FileName is the config file's name inside a .murmur directory.
const FileName = "config.yaml"

// Built-in source names in the resolution order; any other name is a key
// of registries.
const (
	SourceProject = "project"
	SourceGlobal  = "global"
	// SourceScopes stands for every scope source under sources: (GitHub
	// repositories releasing a scope's artifacts); by default it comes
	// last, after every registry.
	SourceScopes = "sources"
)

// DefaultGitHubAPI is the GitHub REST API root a scope source uses unless
// it names another (GitHub Enterprise Server: https://HOST/api/v3).
const DefaultGitHubAPI = "https://api.github.com"

// DefaultTokenEnv is the environment variable a scope source reads its
// GitHub token from unless it names another.
const DefaultTokenEnv = "GITHUB_TOKEN"

// ScopeSource is the GitHub repository whose releases hold a scope's
// artifacts: release tag <version> or v<version>, asset
// <name>-<version>.mur.zip.
type ScopeSource struct {
	// Repo is owner/name on GitHub.
	Repo string `yaml:"repo"`
	// API is the REST API root; "" is DefaultGitHubAPI.
	API string `yaml:"api_url,omitempty"`
	// TokenEnv names the environment variable holding a token; "" is
	// DefaultTokenEnv. An unset or empty variable sends no token.
	TokenEnv string `yaml:"token_env,omitempty"`
}

// APIURL is the source's API root with its default applied.
func (s ScopeSource) APIURL() string {
	if s.API == "" {
		return DefaultGitHubAPI
	}
	return strings.TrimRight(s.API, "/")
}

// Token is the token in the source's environment variable ("" for none).
func (s ScopeSource) Token() string {
	n := s.TokenEnv
	if n == "" {
		n = DefaultTokenEnv
	}
	return os.Getenv(n)
}

// Registry is one OCI registry mur can pull from and publish to.
type Registry struct {
	// URL is the registry's base, such as https://ghcr.io or
	// http://127.0.0.1:5000. http is only for loopback or when
	// plain_http is set.
	URL string `yaml:"url"`
	// Namespace prefixes every repository: <namespace>/<scope>/<name>.
	Namespace string `yaml:"namespace,omitempty"`
	Username  string `yaml:"username,omitempty"`
	Password  string `yaml:"password,omitempty"`
	// Token is a bearer/identity token used instead of username/password.
	Token     string `yaml:"token,omitempty"`
	PlainHTTP bool   `yaml:"plain_http,omitempty"`
}

// File is one config file's content.
type File struct {
	// Resolution is the order sources are tried by mur install: project,
	// global, and registry names.
	Resolution []string            `yaml:"resolution,omitempty"`
	Registries map[string]Registry `yaml:"registries,omitempty"`
	// Publish is mur publish's default target: project, global or a
	// registry name.
	Publish     string            `yaml:"publish,omitempty"`
	Credentials map[string]string `yaml:"credentials,omitempty"`
	// Spend holds machine-wide ceilings; only the global file sets them.
	Spend *Spend `yaml:"spend,omitempty"`
	// TrustedKeys maps an artifact scope (or "*", every scope without an
	// entry) to the public key files one of which must have signed each
	// artifact of that scope mur install installs. Relative paths are
	// relative to the config file's directory (Load resolves them).
	TrustedKeys map[string][]string `yaml:"trusted_keys,omitempty"`
	// Sources maps an artifact scope to the GitHub repository releasing
	// its artifacts, tried (as "sources" in the resolution order) for a
	// version no store or registry holds.
	Sources map[string]ScopeSource `yaml:"sources,omitempty"`
}

// Spend is the machine-wide spend block.
type Spend struct {
	// MachineTokensPerDay bounds the tokens of every run on this machine
	// per UTC day; 0 is no ceiling.
	MachineTokensPerDay int64 `yaml:"machine_tokens_per_day,omitempty"`
}

var (
	credName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	regName  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	// ghRepo is GitHub's owner/name: an owner is letters, digits and
	// single hyphens; a repository name letters, digits, '-', '_' and '.'.
	ghRepo  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Parse decodes and validates a config file. name is used in messages.
func Parse(name string, b []byte) (*File, error) {
	f := &File{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

func (f *File) validate() error {
	for n, r := range f.Registries {
		if !regName.MatchString(n) || n == SourceProject || n == SourceGlobal || n == SourceScopes {
			return fmt.Errorf("%w: registries.%s: a registry name is lowercase letters, digits and '-', and not 'project', 'global' or 'sources'", ErrConfig, n)
		}
		if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
			return fmt.Errorf("%w: registries.%s.url %q must start with https:// or http://", ErrConfig, n, r.URL)
		}
	}
	seen := map[string]bool{}
	for i, s := range f.Resolution {
		if seen[s] {
			return fmt.Errorf("%w: resolution[%d]: %q is listed twice", ErrConfig, i, s)
		}
		seen[s] = true
	}
	for n := range f.Credentials {
		if !credName.MatchString(n) {
			return fmt.Errorf("%w: credentials.%s: a credential name is UPPER_SNAKE_CASE", ErrConfig, n)
		}
	}
	for scope, keys := range f.TrustedKeys {
		if scope != "*" && !regName.MatchString(scope) {
			return fmt.Errorf("%w: trusted_keys.%s: a scope is lowercase letters, digits and '-', or * for every scope", ErrConfig, scope)
		}
		if len(keys) == 0 {
			return fmt.Errorf("%w: trusted_keys.%s lists no key: name at least one public key file (mur key generate writes one), or remove the entry", ErrConfig, scope)
		}
		for i, k := range keys {
			if strings.TrimSpace(k) == "" {
				return fmt.Errorf("%w: trusted_keys.%s[%d] is empty", ErrConfig, scope, i)
			}
		}
	}
	for scope, src := range f.Sources {
		if !regName.MatchString(scope) {
			return fmt.Errorf("%w: sources.%s: a scope is lowercase letters, digits and '-'", ErrConfig, scope)
		}
		if !ghRepo.MatchString(src.Repo) || strings.HasSuffix(src.Repo, "/.") || strings.HasSuffix(src.Repo, "/..") {
			return fmt.Errorf("%w: sources.%s.repo %q must be a GitHub repository owner/name, such as murmur-nexus/artifacts", ErrConfig, scope, src.Repo)
		}
		if src.API != "" && !strings.HasPrefix(src.API, "https://") && !strings.HasPrefix(src.API, "http://") {
			return fmt.Errorf("%w: sources.%s.api_url %q must start with https:// (or http:// for a loopback server)", ErrConfig, scope, src.API)
		}
		if src.TokenEnv != "" && !envName.MatchString(src.TokenEnv) {
			return fmt.Errorf("%w: sources.%s.token_env %q must be an environment variable's name", ErrConfig, scope, src.TokenEnv)
		}
	}
	if f.Spend != nil && f.Spend.MachineTokensPerDay < 0 {
		return fmt.Errorf("%w: spend.machine_tokens_per_day must be a positive integer", ErrConfig)
	}
	return nil
}

// Load reads the config at path; a missing file is an empty config.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	f, err := Parse(path, b)
	if err != nil {
		return nil, err
	}
	for scope, keys := range f.TrustedKeys {
		for i, k := range keys {
			if !filepath.IsAbs(k) {
				keys[i] = filepath.Join(filepath.Dir(path), k)
			}
		}
		f.TrustedKeys[scope] = keys
	}
	return f, nil
}

// MurmurDir is ~/.murmur.
func MurmurDir() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find ~/.murmur: %w", err)
	}
	return filepath.Join(h, ".murmur"), nil
}

// GlobalPath is ~/.murmur/config.yaml.
func GlobalPath() (string, error) {
	d, err := MurmurDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, FileName), nil
}

// ProjectPath is the project config beside the murmur.yaml in dir.
func ProjectPath(dir string) string { return filepath.Join(dir, ".murmur", FileName) }

// Effective is the global config overlaid by the project's: a key the
// project file sets wins. Credentials come only from the global file (a
// project file may be committed, so it never holds keys).
type Effective struct {
	File
	// ProjectDir is the directory of the capsule's murmur.yaml, where the
	// project store lives.
	ProjectDir string
	// TrustedKeysFrom names the file each trusted_keys scope came from.
	TrustedKeysFrom map[string]string
}

// LoadEffective loads ~/.murmur/config.yaml and projectDir's config.
func LoadEffective(projectDir string) (*Effective, error) {
	gp, err := GlobalPath()
	if err != nil {
		return nil, err
	}
	g, err := Load(gp)
	if err != nil {
		return nil, err
	}
	e := &Effective{File: *g, ProjectDir: projectDir, TrustedKeysFrom: map[string]string{}}
	for scope := range g.TrustedKeys {
		e.TrustedKeysFrom[scope] = gp
	}
	if projectDir == "" {
		return e, e.check()
	}
	p, err := Load(ProjectPath(projectDir))
	if err != nil {
		return nil, err
	}
	if len(p.Credentials) > 0 {
		return nil, fmt.Errorf("%w: %s: credentials belong in ~/.murmur/config.yaml only (set them with `mur config set -g`)", ErrConfig, ProjectPath(projectDir))
	}
	if p.Resolution != nil {
		e.Resolution = p.Resolution
	}
	if p.Publish != "" {
		e.Publish = p.Publish
	}
	if len(p.Registries) > 0 {
		regs := map[string]Registry{}
		for k, v := range g.Registries {
			regs[k] = v
		}
		for k, v := range p.Registries {
			regs[k] = v
		}
		e.Registries = regs
	}
	if len(p.Sources) > 0 {
		// Merged by scope, the project's entry winning, as registries are.
		srcs := map[string]ScopeSource{}
		maps.Copy(srcs, g.Sources)
		maps.Copy(srcs, p.Sources)
		e.Sources = srcs
	}
	if len(p.TrustedKeys) > 0 {
		// Merged by scope, the project's entry winning, as registries are.
		keys := map[string][]string{}
		for k, v := range g.TrustedKeys {
			keys[k] = v
		}
		for k, v := range p.TrustedKeys {
			keys[k] = v
			e.TrustedKeysFrom[k] = ProjectPath(projectDir)
		}
		e.TrustedKeys = keys
	}
	return e, e.check()
}

// check refuses a resolution or publish name that names nothing.
func (e *Effective) check() error {
	for i, s := range e.Resolution {
		if s != SourceProject && s != SourceGlobal && s != SourceScopes {
			if _, ok := e.Registries[s]; !ok {
				return fmt.Errorf("%w: resolution[%d]: %q is neither project, global, sources nor a name under registries; add it with `mur config set -g registries.%s.url URL`", ErrConfig, i, s, s)
			}
		}
	}
	if p := e.Publish; p != "" && p != SourceProject && p != SourceGlobal {
		if _, ok := e.Registries[p]; !ok {
			return fmt.Errorf("%w: publish: %q is neither project, global nor a name under registries; add it with `mur config set -g registries.%s.url URL`", ErrConfig, p, p)
		}
	}
	return nil
}

// Order is the resolution order in effect: as configured, else project,
// global, every registry by name, then the scope sources when sources:
// names any.
func (e *Effective) Order() []string {
	if len(e.Resolution) > 0 {
		return e.Resolution
	}
	out := []string{SourceProject, SourceGlobal}
	names := make([]string, 0, len(e.Registries))
	for n := range e.Registries {
		names = append(names, n)
	}
	sort.Strings(names)
	out = append(out, names...)
	if len(e.Sources) > 0 {
		out = append(out, SourceScopes)
	}
	return out
}

// PublishTarget is where mur publish writes by default: as configured,
// else the global store.
func (e *Effective) PublishTarget() string {
	if e.Publish != "" {
		return e.Publish
	}
	return SourceGlobal
}

// Get returns the value at a dotted key (resolution, publish,
// registries.<name>.<field>, credentials.<NAME>, trusted_keys.<scope>,
// sources.<scope>.<field>) from the file at path,
// rendered as the user would type it to set it.
func Get(path, key string) (string, bool, error) {
	root, err := loadNode(path)
	if err != nil {
		return "", false, err
	}
	if err := checkKey(key); err != nil {
		return "", false, err
	}
	n := lookup(root, strings.Split(key, "."))
	if n == nil {
		return "", false, nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, true, nil
	case yaml.SequenceNode:
		parts := make([]string, len(n.Content))
		for i, c := range n.Content {
			parts[i] = c.Value
		}
		return strings.Join(parts, ","), true, nil
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return "", false, fmt.Errorf("render %s: %w", key, err)
	}
	return strings.TrimRight(string(b), "\n"), true, nil
}

// Set writes value at a dotted key in the file at path, keeping every other
// key and comment, validating the result before it replaces the file
// atomically (mode 0600: the file may hold keys). resolution and
// trusted_keys.<scope> take a comma-separated list. An empty value removes the key.
func Set(path, key, value string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	root, err := loadNode(path)
	if err != nil {
		return err
	}
	parts := strings.Split(key, ".")
	var val *yaml.Node
	switch {
	case value == "":
	case key == "resolution" || strings.HasPrefix(key, "trusted_keys."):
		val = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range strings.Split(value, ",") {
			val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: strings.TrimSpace(s)})
		}
	case key == "spend.machine_tokens_per_day":
		if n, err := strconv.ParseInt(value, 10, 64); err != nil || n <= 0 {
			return fmt.Errorf("%w: %s takes a positive integer, not %q", ErrConfig, key, value)
		}
		val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: value}
	case strings.HasSuffix(key, ".plain_http"):
		if _, err := strconv.ParseBool(value); err != nil {
			return fmt.Errorf("%w: %s takes true or false, not %q", ErrConfig, key, value)
		}
		val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: value}
	default:
		val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
	}
	setNode(root, parts, val)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	enc.Close()
	if _, err := Parse(path, buf.Bytes()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return writeAtomic(path, buf.Bytes())
}

var sourceFields = map[string]bool{"repo": true, "api_url": true, "token_env": true}

var registryFields = map[string]bool{"url": true, "namespace": true, "username": true, "password": true, "token": true, "plain_http": true}

// checkKey accepts only keys the file defines, so a typo is refused rather
// than written and ignored.
func checkKey(key string) error {
	p := strings.Split(key, ".")
	switch {
	case key == "resolution" || key == "publish" || key == "spend.machine_tokens_per_day":
		return nil
	case p[0] == "credentials" && len(p) == 2 && credName.MatchString(p[1]):
		return nil
	case p[0] == "trusted_keys" && len(p) == 2 && (p[1] == "*" || regName.MatchString(p[1])):
		return nil
	case p[0] == "registries" && len(p) == 3 && regName.MatchString(p[1]) && registryFields[p[2]]:
		return nil
	case p[0] == "sources" && len(p) == 3 && regName.MatchString(p[1]) && sourceFields[p[2]]:
		return nil
	}
	return fmt.Errorf("%w: unknown key %q: keys are resolution, publish, registries.<name>.{url,namespace,username,password,token,plain_http}, credentials.<NAME>, spend.machine_tokens_per_day, trusted_keys.<scope> and sources.<scope>.{repo,api_url,token_env}", ErrConfig, key)
}

func loadNode(path string) (*yaml.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if _, err := Parse(path, b); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, path, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode}, nil
	}
	return doc.Content[0], nil
}

func lookup(n *yaml.Node, parts []string) *yaml.Node {
	for _, p := range parts {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == p {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// setNode sets (val != nil) or deletes (val == nil) the key at parts,
// creating intermediate mappings as needed.
func setNode(n *yaml.Node, parts []string, val *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != parts[0] {
			continue
		}
		if len(parts) == 1 {
			if val == nil {
				n.Content = append(n.Content[:i], n.Content[i+2:]...)
			} else {
				n.Content[i+1] = val
			}
			return
		}
		if n.Content[i+1].Kind != yaml.MappingNode {
			n.Content[i+1] = &yaml.Node{Kind: yaml.MappingNode}
		}
		setNode(n.Content[i+1], parts[1:], val)
		return
	}
	if val == nil {
		return
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Value: parts[0]}
	if len(parts) == 1 {
		n.Content = append(n.Content, k, val)
		return
	}
	child := &yaml.Node{Kind: yaml.MappingNode}
	n.Content = append(n.Content, k, child)
	setNode(child, parts[1:], val)
}

func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+FileName+".tmp-")
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}
