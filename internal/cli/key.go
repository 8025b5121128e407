package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/artifact"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/sign"
	"github.com/murmur/mur/internal/store"
)

func init() { register(newKeyCmd) }

func newKeyCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Make key pairs that sign published artifacts",
		Long: `key generate makes an ECDSA P-256 key pair offline: NAME.key (PKCS#8 PEM,
mode 0600) signs with mur publish --sign, NAME.pub (PKIX PEM) is what installers
trust under trusted_keys.<scope> in config.yaml. It prints the key's id, the
sha256 of its public key, which signatures and murmur.lock name.`,
		Example: `  mur key generate ana
  mur publish tool-0.1.0.mur.zip --scope ana --sign ~/.murmur/keys/ana.key
  mur config set -g trusted_keys.ana ~/.murmur/keys/ana.pub`,
		Args: cobra.NoArgs,
	}
	var dir string
	gen := &cobra.Command{
		Use:   "generate NAME",
		Short: "Make a key pair NAME.key / NAME.pub (default in ~/.murmur/keys)",
		Example: `  mur key generate ana
  mur key generate release --dir ./keys`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				md, err := config.MurmurDir()
				if err != nil {
					return reportErr(env, err)
				}
				dir = filepath.Join(md, "keys")
			}
			priv, pub, id, err := sign.Generate(dir, args[0])
			if err != nil {
				return reportErr(env, err)
			}
			fmt.Fprintf(env.Stdout, "private key %s (sign with: mur publish --sign %s)\npublic key  %s (trust with: mur config set -g trusted_keys.<scope> %s)\nkey id      %s\n", priv, priv, pub, pub, id)
			return nil
		},
	}
	gen.Flags().StringVar(&dir, "dir", "", "directory to write the pair into (default ~/.murmur/keys)")
	cmd.AddCommand(gen)
	return cmd
}

// signPublished signs the published package's digest with the key at
// keyPath and attaches the bundle to ref in target.
func signPublished(env *Env, target store.Source, ref artifact.Ref, digest, keyPath string) (string, error) {
	s, ok := target.(store.Signed)
	if !ok {
		return "", fmt.Errorf("%s keeps no signatures", target.Name())
	}
	k, err := sign.LoadPrivate(keyPath)
	if err != nil {
		return "", err
	}
	b, err := sign.Sign(k, digest)
	if err != nil {
		return "", err
	}
	if err := s.AttachSignature(env.Ctx, ref, b); err != nil {
		return "", err
	}
	return k.ID, nil
}
