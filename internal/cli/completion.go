package cli

import (
	"github.com/spf13/cobra"
)

func init() { register(newCompletionCmd) }

// newCompletionCmd replaces cobra's default completion command with one
// that names exactly the shells mur supports and carries an example.
func newCompletionCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script for mur",
		Long: `completion prints the script that teaches a shell to complete mur's commands,
flags and arguments. Load it once per shell, or install it where the shell
looks for completions.`,
		Example: `  source <(mur completion bash)                       # this bash session
  mur completion bash > /etc/bash_completion.d/mur    # every bash session
  mur completion zsh > "${fpath[1]}/_mur"             # zsh (compinit must be on)
  mur completion fish > ~/.config/fish/completions/mur.fish`,
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(env.Stdout, true)
			case "zsh":
				return root.GenZshCompletion(env.Stdout)
			default:
				return root.GenFishCompletion(env.Stdout, true)
			}
		},
	}
}
