// Package process is transport: process (spec 004, "transport: process —
// harness subprocess"): a harness CLI runs as the model, driven through a
// process driver component (murmur:driver/process). This package holds
// the launch checks in the spec's order, the harness binary's resolution
// and version check, the harness's environment, the harness session map,
// and Transport, which runs one task as one harness run inside the
// session's sandbox and turns its output into the session's records.
package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
)

// Driver is what the transport calls of a process driver;
// *component.ProcessDriver is one.
type Driver interface {
	Describe(ctx context.Context) (component.ProcessDescription, error)
	ParseVersion(ctx context.Context, output string) (string, bool, error)
	Launch(ctx context.Context, r component.LaunchRequest) (component.LaunchPlan, error)
	ParseLine(ctx context.Context, line string) ([]component.HarnessEvent, error)
}

// Where names the manifest positions the launch checks' refusals point at.
type Where func(field string) diag.Pos

// varName is a usable environment variable name: what describe() may
// require.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckDescription runs the launch checks that follow describe(), in the
// spec's order, and returns the first refusal: E-RUN-032 for a required
// name that is no usable variable name, E-CAP-019 for one
// capabilities.env.allow does not declare, E-RUN-038 for a spend ceiling
// in effect against a driver that reports no usage.
func CheckDescription(d component.ProcessDescription, driver string, envAllow []string, ceiling string, at Where) *diag.Diagnostic {
	for _, n := range d.RequiredEnv {
		if !varName.MatchString(n) {
			x := diag.New(diag.RunDescribe, at("inference.driver.artifact"), "inference.driver.artifact",
				fmt.Sprintf("process driver '%s': describe() requires the variable %q, which is not a usable variable name; fix the driver", driver, n))
			return &x
		}
	}
	if d.Executable == "" {
		x := diag.New(diag.RunDescribe, at("inference.driver.artifact"), "inference.driver.artifact",
			fmt.Sprintf("process driver '%s': describe() names no executable; fix the driver", driver))
		return &x
	}
	var missing []string
	for _, n := range d.RequiredEnv {
		if !slices.Contains(envAllow, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		x := diag.New(diag.CapProcessEnv, at("capabilities.env.allow"), "capabilities.env.allow",
			fmt.Sprintf("process driver '%s' requires %s for its harness; add %s to capabilities.env.allow", driver, strings.Join(missing, ", "), strings.Join(missing, ", ")))
		return &x
	}
	if ceiling != "" && !d.ReportsUsage {
		x := diag.New(diag.RunNoUsage, at(ceiling), ceiling,
			fmt.Sprintf("process driver '%s' reports no token usage, so %s could never be enforced; remove the ceiling or use a driver that reports usage", driver, ceiling))
		return &x
	}
	return nil
}

// Resolve is the harness binary: inference.command when set (a value with
// a / is a path, relative to the manifest's directory; a bare name is
// looked up on path), else describe()'s executable on path. A binary that
// cannot be resolved is E-RUN-006.
func Resolve(command, executable, path, manifestDir string, at Where) (string, *diag.Diagnostic) {
	name, field := executable, "inference.driver.artifact"
	if command != "" {
		name, field = command, "inference.command"
	}
	fail := func(why string) (string, *diag.Diagnostic) {
		hint := "install the harness or set inference.command to its path"
		x := diag.New(diag.RunNotInstalled, at(field), field, fmt.Sprintf("harness binary %q %s; %s", name, why, hint))
		return "", &x
	}
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(manifestDir, p)
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			return fail("does not exist")
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			return fail("is not an executable file")
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would resolve against mur's own directory
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return fail("is not on PATH")
}

// versionTimeout bounds the version check: a harness that does not print
// its version in this time is W-RUN-002, not a hung launch.
const versionTimeout = 10 * time.Second

// versionOutputMax caps what the version check reads.
const versionOutputMax = 64 << 10

// VersionCheck runs the binary with describe()'s version arguments and the
// environment env (rows 1 and 3 of Process environment), and returns the
// version the driver reads from its output. A version the driver was not
// tested against, or none, is W-RUN-002; the run proceeds either way.
func VersionCheck(ctx context.Context, d Driver, desc component.ProcessDescription, bin, dir string, env []string, at Where) (string, *diag.Diagnostic) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, desc.VersionArgs...)
	cmd.Env, cmd.Dir = env, dir
	var out limitedBuffer
	out.max = versionOutputMax
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	warn := func(msg string) (string, *diag.Diagnostic) {
		x := diag.New(diag.RunHarnessVersion, at("inference.driver.artifact"), "inference.driver.artifact", msg)
		return "", &x
	}
	v, ok, err := d.ParseVersion(ctx, out.String())
	switch {
	case err != nil:
		return warn(fmt.Sprintf("the version of harness %s could not be read: %v; the run proceeds", bin, err))
	case !ok && runErr != nil:
		return warn(fmt.Sprintf("the version of harness %s could not be read: %s %s: %v; the run proceeds", bin, bin, strings.Join(desc.VersionArgs, " "), runErr))
	case !ok:
		return warn(fmt.Sprintf("the version of harness %s could not be read from its output; the run proceeds", bin))
	case !slices.Contains(desc.TestedVersions, v):
		x := diag.New(diag.RunHarnessVersion, at("inference.driver.artifact"), "inference.driver.artifact",
			fmt.Sprintf("harness %s is version %s, which its driver was not tested against (tested: %s); the run proceeds", bin, v, strings.Join(desc.TestedVersions, ", ")))
		return v, &x
	}
	return v, nil
}

// limitedBuffer keeps the first max bytes written to it and drops the
// rest, so a harness that floods its version output cannot grow mur.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Env is the harness's environment (spec 004, Process environment), built
// row by row from an empty one; a later row wins for the same name.
type Env struct {
	// Allow is row 1: the host's value of each capabilities.env.allow name
	// the host sets, after the credential backstop.
	Allow [][2]string
	// Account is row 3: USER and LOGNAME as the host sets them; Unset
	// names the ones it does not (harness_start's account_env_unset).
	Account [][2]string
	Unset   []string
	// Session is row 4: MURMUR_RUNTIME_DIR and MURMUR_RECORDS_DIR.
	Session [][2]string
}

// HostEnv builds rows 1 and 3 from the host's environment. backstop
// reports a name the credential backstop removes.
func HostEnv(allow []string, getenv func(string) (string, bool), backstop func(string) bool) Env {
	var e Env
	for _, n := range allow {
		if backstop != nil && backstop(n) {
			continue
		}
		if v, ok := getenv(n); ok {
			e.Allow = append(e.Allow, [2]string{n, v})
		}
	}
	for _, n := range []string{"USER", "LOGNAME"} {
		if v, ok := getenv(n); ok {
			e.Account = append(e.Account, [2]string{n, v})
		} else {
			e.Unset = append(e.Unset, n)
		}
	}
	return e
}

// Version is the environment of the version check: rows 1 and 3 only.
func (e Env) Version() []string { return compose(e.Allow, e.Account) }

// Harness is the harness's environment for one launch plan: rows 1 to 4.
func (e Env) Harness(plan []component.Pair) []string {
	set := make([][2]string, len(plan))
	for i, p := range plan {
		set[i] = p
	}
	return compose(e.Allow, set, e.Account, e.Session)
}

// compose applies rows in order: a later row's value replaces an earlier
// one's, in the earlier one's place.
func compose(rows ...[][2]string) []string {
	var names []string
	vals := map[string]string{}
	for _, row := range rows {
		for _, kv := range row {
			if _, seen := vals[kv[0]]; !seen {
				names = append(names, kv[0])
			}
			vals[kv[0]] = kv[1]
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + "=" + vals[n]
	}
	return out
}

// InterfaceRefusal maps the error of component.Instance.ProcessDriver to
// its launch code: E-WIT-LEVEL-001 for another version of the interface,
// E-RUN-029 for none, E-RUN-032 for a driver that does not instantiate.
func InterfaceRefusal(err error, driver string, at Where) diag.Diagnostic {
	pos := at("inference.driver.artifact")
	switch {
	case errors.Is(err, component.ErrVersion):
		return diag.New(diag.WITLevel, pos, "inference.driver.artifact", fmt.Sprintf("process driver '%s': %v", driver, err))
	case errors.Is(err, component.ErrNoProcess):
		return diag.New(diag.RunNoProcessInterface, pos, "inference.driver.artifact",
			fmt.Sprintf("artifact '%s' exports no %s, so it cannot drive a harness under transport: process; name a process driver", driver, component.IfaceProcess))
	}
	return diag.New(diag.RunDescribe, pos, "inference.driver.artifact", fmt.Sprintf("process driver '%s' did not instantiate with no grants or describe() failed: %v", driver, err))
}
