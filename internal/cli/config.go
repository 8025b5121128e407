package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/config"
)

func init() { register(newConfigCmd) }

func newConfigCmd(env *Env) *cobra.Command {
	var (
		global bool
		path   string
		asJSON bool
	)
	file := func() (string, error) {
		if global {
			return config.GlobalPath()
		}
		if !inProject(path) {
			return "", fmt.Errorf("%w: no %s here for a project config: pass -g for ~/.murmur/config.yaml, or --manifest PATH", config.ErrConfig, path)
		}
		return config.ProjectPath(projectDirOf(path)), nil
	}
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Read and write config.yaml: resolution order, registries, credentials",
		Long: `config reads and writes the project's .murmur/config.yaml beside murmur.yaml,
or with -g the global ~/.murmur/config.yaml. Keys:

  resolution                       comma-separated: project, global, sources, registry names
  publish                          mur publish's default target
  registries.<name>.url            https://host or http://127.0.0.1:port
  registries.<name>.namespace      repository prefix
  registries.<name>.username, .password, .token, .plain_http
  credentials.<NAME>               a gateway key (global only)
  sources.<scope>.repo             the GitHub owner/name releasing <scope>'s artifacts
  sources.<scope>.api_url, .token_env   API root (default https://api.github.com),
                                   token variable (default GITHUB_TOKEN)

Setting an empty value removes the key.`,
		Example: `  mur config set -g credentials.OPENAI_API_KEY sk-...
  mur config get -g publish`,
	}
	cmd.PersistentFlags().BoolVarP(&global, "global", "g", false, "the global ~/.murmur/config.yaml")
	cmd.PersistentFlags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest whose project config to use")
	cmd.AddCommand(&cobra.Command{
		Use:   "get KEY",
		Short: "Print a key's value",
		Example: `  mur config get -g registries.hub.url
  mur config get publish              # the project's .murmur/config.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := file()
			if err != nil {
				return reportErr(env, err)
			}
			v, ok, err := config.Get(f, args[0])
			if err != nil {
				return reportErr(env, err)
			}
			if !ok {
				fmt.Fprintf(env.Stderr, "%s is not set in %s\n", args[0], f)
				return &ExitError{Code: 1, Silent: true}
			}
			if asJSON {
				return writeJSON(env.Stdout, map[string]string{"key": args[0], "value": v, "file": f})
			}
			fmt.Fprintln(env.Stdout, v)
			return nil
		},
	}, &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set a key (an empty VALUE removes it)",
		Example: `  mur config set -g credentials.ANTHROPIC_API_KEY sk-ant-...
  mur config set -g registries.hub.url https://ghcr.io`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.HasPrefix(args[0], "credentials.") && !global {
				return reportErr(env, fmt.Errorf("%w: credentials are kept only in ~/.murmur/config.yaml, never beside a manifest that may be committed: use `mur config set -g %s VALUE`", config.ErrConfig, args[0]))
			}
			f, err := file()
			if err != nil {
				return reportErr(env, err)
			}
			if err := config.Set(f, args[0], args[1]); err != nil {
				return reportErr(env, err)
			}
			return nil
		},
	})
	if get, _, err := cmd.Find([]string{"get"}); err == nil {
		get.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (key, value, file)")
	}
	return cmd
}
