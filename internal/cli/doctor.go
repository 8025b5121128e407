package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/sandbox"
	"github.com/murmur/mur/internal/store"
)

func init() {
	register(newDoctorCmd)
	RegisterDoctorCheck(func(_ *Env, c *manifest.Capsule) diag.List {
		_, ds := credentialStatus(c)
		return ds
	})
	RegisterDoctorCheck(func(_ *Env, c *manifest.Capsule) diag.List { return manifest.CheckPromptFiles(c) })
}

// DoctorCheck is a check mur doctor runs without --static: installed
// artifacts, credentials (set/unset by name only), host probes, model
// limits. Other areas add theirs from init with RegisterDoctorCheck.
type DoctorCheck func(env *Env, c *manifest.Capsule) diag.List

var doctorChecks []DoctorCheck

// RegisterDoctorCheck adds a non-static doctor check.
func RegisterDoctorCheck(f DoctorCheck) { doctorChecks = append(doctorChecks, f) }

func newDoctorCmd(env *Env) *cobra.Command {
	var (
		path      string
		static    bool
		asJSON    bool
		effective bool
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Report every problem with a capsule manifest",
		Long: `doctor reads a capsule manifest and reports every diagnostic, one line each,
beginning with its code. --static runs only what the manifest alone decides.
--effective prints the manifest with every default applied instead.
Exit status 1 when any error is found.`,
		Example: `  cd capsules/hello && mur doctor
  mur doctor --static --manifest capsules/hello/murmur.yaml
  mur doctor --json | jq '.diagnostics[] | .code'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := needProject(cmd, path); err != nil {
				return err
			}
			c, ds := manifest.LoadCapsule(path)
			var unhonoured diag.List
			if c != nil && !ds.HasErrors() {
				// What mur run refuses as not carried out (E-RUN-900); the
				// other checks still run.
				unhonoured = c.Unhonoured()
			}
			var (
				limits  []manifest.ChoiceLimits
				creds   []manifest.CredentialStatus
				contain *sandbox.Report
			)
			if c != nil && !ds.HasErrors() && !static {
				for _, check := range doctorChecks {
					ds = append(ds, check(env, c)...)
				}
				r, cds := capsule.Containment(c)
				ds = append(ds, cds...)
				contain = &r
				ds.Sort()
				limits = modelLimits(env, c)
				creds, _ = credentialStatus(c)
			}
			if len(unhonoured) > 0 {
				ds = append(ds, unhonoured...)
				ds.Sort()
			}
			if effective && c != nil && !ds.HasErrors() {
				if err := writeEffective(env.Stdout, c, asJSON); err != nil {
					return err
				}
				writeDiagnostics(env.Stderr, ds, true)
				return nil
			}
			if asJSON {
				if err := writeDiagnosticsJSON(env.Stdout, ds, limits, creds, contain); err != nil {
					return err
				}
			} else {
				writeDiagnostics(env.Stdout, ds, true)
				if len(ds) == 0 {
					fmt.Fprintf(env.Stdout, "%s: no problems found\n", path)
				}
				writeLimits(env.Stdout, limits)
				writeCredentials(env.Stdout, creds)
				if c != nil && c.Capabilities != nil && c.Capabilities.Install != nil {
					// Where a running session's pulls resolve (spec 004).
					fmt.Fprintf(env.Stdout, "install from: %s\n", strings.Join(c.Effective().Capabilities.Install.From, ", "))
				}
				if contain != nil {
					for _, l := range contain.Lines() {
						fmt.Fprintln(env.Stdout, l)
					}
				}
			}
			if ds.HasErrors() {
				return &ExitError{Code: ExitRefused, Silent: true}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "manifest", "murmur.yaml", "capsule manifest to check")
	cmd.Flags().BoolVar(&static, "static", false, "only checks the manifest alone decides: no stores, credentials or host probes")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&effective, "effective", false, "print the effective manifest, every default applied (YAML, or JSON with --json)")
	return cmd
}

// writeDiagnostics prints one line per diagnostic, beginning with its
// code: every diagnostic when all is set, else the errors alone. Other
// commands that read a manifest use it so they refuse alike.
// credentialStatus resolves every gateway's ${NAME} by name only:
// credentials.NAME in ~/.murmur/config.yaml, then the environment (W-SEC-027),
// unset refusing as mur run would (E-MAN-003, or W-RUN-003 for an
// alternate driver). No value is ever read out or printed.
func credentialStatus(c *manifest.Capsule) ([]manifest.CredentialStatus, diag.List) {
	look := manifest.CredentialLookup{Env: func(name string) bool { return os.Getenv(name) != "" }}
	if creds, err := config.GlobalCredentials(); err == nil {
		look.Config = func(name string) bool {
			_, ok, err := creds.Credential(name)
			return err == nil && ok
		}
	}
	return manifest.CheckCredentials(c, look)
}

// writeCredentials prints where each gateway's key comes from, by name.
func writeCredentials(w io.Writer, sts []manifest.CredentialStatus) {
	if len(sts) == 0 {
		return
	}
	fmt.Fprintln(w, "credentials:")
	for _, st := range sts {
		name := ""
		if st.Name != "" {
			name = " ${" + st.Name + "}"
		}
		fmt.Fprintf(w, "  %s:%s %s\n", st.Artifact, name, credentialSourceText[st.Source])
	}
}

var credentialSourceText = map[string]string{
	manifest.KeyFromConfig:     "set in ~/.murmur/config.yaml",
	manifest.KeyFromEnv:        "set in the environment",
	manifest.KeyLiteral:        "a literal in the manifest",
	manifest.KeyKeyless:        "keyless",
	manifest.KeyFromController: "supplied by a controller (control.secrets)",
	manifest.KeyUnset:          "unset",
}

// writeDiagnostics prints one line per diagnostic, beginning with its
// code: every diagnostic when all is set, else the errors alone. Other
// commands that read a manifest use it so they refuse alike.
func writeDiagnostics(w io.Writer, ds diag.List, all bool) {
	for _, d := range ds {
		if all || d.Severity == diag.Error {
			fmt.Fprintln(w, d.String())
		}
	}
}

type jsonDiagnostic struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Field    string `json:"field"`
	Message  string `json:"message"`
}

// modelLimits resolves each transport: http driver choice's output cap,
// window and input budget against the installed drivers, as a launch
// would; nothing when a driver is not installed (doctor reports that).
func modelLimits(env *Env, c *manifest.Capsule) []manifest.ChoiceLimits {
	if c.Inference == nil || c.Inference.IsProcess() {
		return nil
	}
	floor := ""
	if c.Capabilities != nil {
		floor = c.Capabilities.Containment
	}
	res, _ := store.Stage(env.Ctx, c, floor)
	if res == nil {
		return nil
	}
	limits, _ := manifest.ResolveLimits(c, res)
	return limits
}

// writeLimits prints each driver choice's resolved limits and where each
// came from.
func writeLimits(w io.Writer, limits []manifest.ChoiceLimits) {
	if len(limits) == 0 {
		return
	}
	fmt.Fprintln(w, "model limits:")
	for _, l := range limits {
		window, budget, ceiling := "none", "none", "none"
		if l.Window > 0 {
			window = fmt.Sprintf("%d (%s)", l.Window, l.WindowSource)
		}
		if l.Ceiling > 0 {
			ceiling = fmt.Sprint(l.Ceiling)
		}
		if l.Budget > 0 {
			budget = fmt.Sprintf("%d (%s)", l.Budget, l.Basis)
		}
		outCap := "unresolved"
		if l.OutputCap > 0 {
			outCap = fmt.Sprintf("%d (%s)", l.OutputCap, l.OutputCapSource)
		}
		fmt.Fprintf(w, "  %s: %s on %s: output cap %s, window %s, ceiling %s, input budget %s\n", l.Choice, l.Model, l.Driver, outCap, window, ceiling, budget)
	}
}

func writeDiagnosticsJSON(w io.Writer, ds diag.List, limits []manifest.ChoiceLimits, creds []manifest.CredentialStatus, contain *sandbox.Report) error {
	out := struct {
		Diagnostics []jsonDiagnostic            `json:"diagnostics"`
		ModelLimits []manifest.ChoiceLimits     `json:"model_limits,omitempty"`
		Credentials []manifest.CredentialStatus `json:"credentials,omitempty"`
		Containment map[string]any              `json:"containment,omitempty"`
	}{Diagnostics: []jsonDiagnostic{}, ModelLimits: limits, Credentials: creds}
	if contain != nil {
		out.Containment = capsule.ContainmentRecord(*contain)
	}
	for _, d := range ds {
		out.Diagnostics = append(out.Diagnostics, jsonDiagnostic{
			Code: string(d.Code), Severity: d.Severity.String(), File: d.Pos.File,
			Line: d.Pos.Line, Column: d.Pos.Col, Field: d.Field, Message: d.Msg,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeEffective(w io.Writer, c *manifest.Capsule, asJSON bool) error {
	e := c.Effective()
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("encoding the effective manifest: %w", err)
	}
	return enc.Close()
}
