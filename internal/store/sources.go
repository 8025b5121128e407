package store

import (
	"fmt"

	"github.com/murmur/mur/internal/config"
)

// Open names sources in a configuration: project, global and registries.
type Open struct {
	Config  *config.Effective
	Project *Project
	// MurmurDir is ~/.murmur.
	MurmurDir string
}

// OpenFromConfig loads the configuration in effect for the capsule in
// projectDir ("" outside a project).
func OpenFromConfig(projectDir string) (*Open, error) {
	cfg, err := config.LoadEffective(projectDir)
	if err != nil {
		return nil, err
	}
	md, err := config.MurmurDir()
	if err != nil {
		return nil, err
	}
	o := &Open{Config: cfg, MurmurDir: md}
	if projectDir != "" {
		o.Project = ProjectAt(projectDir)
	}
	return o, nil
}

// Source opens the source called name: project, global or a registry.
func (o *Open) Source(name string) (Source, error) {
	switch name {
	case config.SourceProject:
		if o.Project == nil {
			return nil, fmt.Errorf("the project store needs a capsule: run this next to a murmur.yaml")
		}
		return o.Project.Store, nil
	case config.SourceGlobal:
		return GlobalStore(o.MurmurDir), nil
	}
	r, ok := o.Config.Registries[name]
	if !ok {
		return nil, fmt.Errorf("%q is neither project, global nor a registry under registries: in config.yaml", name)
	}
	return NewRegistry(name, r)
}

// Sources opens the resolution order; outside a project it leaves out the
// project store, and "sources" stands for every scope source by scope.
func (o *Open) Sources() ([]Source, error) {
	var out []Source
	for _, n := range o.Config.Order() {
		if n == config.SourceProject && o.Project == nil {
			continue
		}
		if n == config.SourceScopes {
			scopes, err := ScopeSources(o.Config.Sources)
			if err != nil {
				return nil, err
			}
			out = append(out, scopes...)
			continue
		}
		s, err := o.Source(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
