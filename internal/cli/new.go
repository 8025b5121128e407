package cli

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
)

func init() { register(newNewCmd) }

// templates holds one directory per kind and language (tool-go, tool-js,
// script-go, script-js, hook-go, driver-go, capsule, skill); each file is a text/template
// named with a .tmpl suffix, which keeps the Go sources out of this
// module's packages.
//
//go:embed templates
var templates embed.FS

// newKinds are the kinds mur new writes, and the languages each has.
var newKinds = map[string][]string{
	"tool":    {"go", "js"},
	"script":  {"go", "js"},
	"driver":  {"go"},
	"hook":    {"go"},
	"capsule": nil,
	"skill":   nil,
}

// newName is an artifact name mur new accepts: what a scope-less
// artifact name may be (spec 004), so the project builds as written.
var newName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

func newNewCmd(env *Env) *cobra.Command {
	var lang, root string
	cmd := &cobra.Command{
		Use:   "new tool|script|driver|hook|capsule|skill NAME",
		Short: "Write a new project from a template: a murmur.yaml, its source, a build script and a test",
		Long: `New writes the folder NAME with a working project of the kind asked for,
from templates inside mur:

  tool     murmur.yaml, Go source using sdk/go/tool (or --lang js: index.js),
           a test (go test, or node --test), build.sh
  script   a script capsule (no model: the component calls its tools) in Go
           using sdk/go/capsule (or --lang js: index.js), build.sh, and
           capsule/murmur.yaml, the capsule that runs it with murmur/file-go
  driver   an inference driver in Go (sdk/go/driver): murmur.yaml with a
           model, the turn, a test of its event parsing, build.sh
  hook     a hook in Go (sdk/go/hook) that notes each tool call, its test,
           build.sh
  capsule  murmur.yaml using murmur/driver-openai and murmur/file-go, and
           provider-script.json for the offline provider double
  skill    murmur.yaml and skill.md

build.sh builds the component with mur's guest toolchain
(tools/guest/build.sh in mur's source tree, --mur-root, default MUR_ROOT
or the source tree mur new runs in) and packs it with mur build. NAME
must not exist yet.`,
		Example: `  mur new tool greet && bash greet/build.sh && mur publish greet/greet-0.1.0.mur.zip --scope me
  mur new tool greet-js --lang js
  mur new script tidy && bash tidy/build.sh && mur publish tidy/tidy-0.1.0.mur.zip --scope me && cd tidy/capsule && mur install && mur run
  mur new script tidy-js --lang js
  mur new capsule my-agent && cd my-agent && mur install
  mur new skill house-style && mur build house-style`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name := args[0], args[1]
			dir, err := newProject(kind, name, lang, root)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "%s\n", dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "go", "source language of a tool or script: go or js (drivers and hooks: go)")
	cmd.Flags().StringVar(&root, "mur-root", "", "mur's source tree, for the guest SDK and toolchain (default: MUR_ROOT, else the tree the current folder is in)")
	return cmd
}

// newProject writes the project and returns its folder.
func newProject(kind, name, lang, root string) (string, error) {
	langs, ok := newKinds[kind]
	if !ok {
		return "", usageError(fmt.Errorf("new %s: no such kind; give tool, script, driver, hook, capsule or skill", kind))
	}
	if !newName.MatchString(name) {
		return "", usageError(fmt.Errorf("new %s %q: a name is lower-case letters, digits, '.', '_' and '-', starting with a letter or digit", kind, name))
	}
	tdir := kind
	if langs != nil {
		if !slices.Contains(langs, lang) {
			return "", usageError(fmt.Errorf("new %s --lang %s: this build has %s templates only", kind, lang, strings.Join(langs, " and ")))
		}
		tdir = kind + "-" + lang
	} else if lang != "go" {
		return "", usageError(fmt.Errorf("new %s: --lang is for tools, scripts, drivers and hooks", kind))
	}
	if _, err := os.Lstat(name); err == nil {
		return "", &ExitError{Code: ExitFailed, Err: fmt.Errorf("new: %s already exists; pick another name or remove it", name)}
	}
	data := struct{ Name, Root string }{Name: name}
	if langs != nil {
		r, err := murRoot(root)
		if err != nil {
			return "", &ExitError{Code: ExitFailed, Err: err}
		}
		data.Root = r
	}
	files := map[string][]byte{}
	err := fs.WalkDir(templates, path.Join("templates", tdir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		t, err := template.New(p).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return err
		}
		var out bytes.Buffer
		if err := t.Execute(&out, data); err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, "templates/"+tdir+"/"), ".tmpl")
		files[rel] = out.Bytes()
		return nil
	})
	if err != nil {
		return "", err
	}
	if err := os.Mkdir(name, 0o755); err != nil {
		return "", &ExitError{Code: ExitFailed, Err: fmt.Errorf("new: %w", err)}
	}
	for rel, b := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		// A script's capsule/murmur.yaml is the one file in a subfolder.
		if err := os.MkdirAll(filepath.Join(name, filepath.Dir(rel)), 0o755); err != nil {
			return "", &ExitError{Code: ExitFailed, Err: fmt.Errorf("new: %w", err)}
		}
		if err := os.WriteFile(filepath.Join(name, rel), b, mode); err != nil {
			return "", &ExitError{Code: ExitFailed, Err: fmt.Errorf("new: %w", err)}
		}
	}
	return name, nil
}

// murRoot is mur's source tree: flag, else MUR_ROOT, else the tree the
// current folder is in (a go.mod of module github.com/murmur/mur).
func murRoot(flag string) (string, error) {
	root := flag
	if root == "" {
		root = os.Getenv("MUR_ROOT")
	}
	if root == "" {
		dir, err := os.Getwd()
		if err != nil {
			return "", err
		}
		for ; ; dir = filepath.Dir(dir) {
			if isMurRoot(dir) {
				root = dir
				break
			}
			if filepath.Dir(dir) == dir {
				return "", errors.New("new: a component's build needs mur's source tree (its guest SDK and tools/guest/build.sh): run mur new inside it, or pass --mur-root DIR or set MUR_ROOT")
			}
		}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if !isMurRoot(abs) {
		return "", fmt.Errorf("new: %s is not mur's source tree (no go.mod of module github.com/murmur/mur and tools/guest/build.sh)", abs)
	}
	return abs, nil
}

func isMurRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !bytes.HasPrefix(b, []byte("module github.com/murmur/mur\n")) {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "tools", "guest", "build.sh"))
	return err == nil
}
