package cli

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/mcp"
)

func init() { register(newMCPCmd) }

// mcpTokenEnv names the variable mur mcp --http takes its bearer token
// from; unset, it makes one and prints it.
const mcpTokenEnv = "MUR_MCP_TOKEN"

func newMCPCmd(env *Env) *cobra.Command {
	var (
		f    capsule.Options
		addr string
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve a capsule's tools to an MCP client, under the capsule's grants",
		Long: `Mcp opens the capsule's session and serves its tools (WASM tools, shell
and native tools, skills, runtime tools) over the Model Context Protocol:
on stdin/stdout by default, or as streamable HTTP on --http ADDR at /mcp,
where every request needs "Authorization: Bearer <token>" (the token is
$MUR_MCP_TOKEN, or one mur makes and prints on stderr). Each call runs
under exactly the grants, sandbox and limits it has in mur run, and is
recorded in the session's trace. The session ends when stdin closes or
on SIGINT/SIGTERM; its status line goes to stderr.

Exit status: 0 served and closed, 2 the capsule was refused before any
session existed, 1 the server or the session's records failed.`,
		Example: `  mur mcp --manifest capsules/hello/murmur.yaml
  MUR_MCP_TOKEN=$(openssl rand -hex 32) mur mcp --http 127.0.0.1:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := needProject(cmd, f.Manifest); err != nil {
				return err
			}
			if code := serveMCP(env, f, addr); code != 0 {
				return &ExitError{Code: code, Silent: true}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Manifest, "manifest", "murmur.yaml", "capsule manifest")
	fl.StringVar(&f.Workdir, "workdir", "", "work folder (default: <manifest-dir>/workdir/<session-id>)")
	fl.StringVar(&addr, "http", "", "serve streamable HTTP on this address (host:port) instead of stdio")
	return cmd
}

// serveMCP opens the session, serves it until the client or a signal ends
// it, and closes it; its result is mur mcp's exit status.
func serveMCP(env *Env, o capsule.Options, addr string) int {
	o.Stderr = env.Stderr
	s, err := capsule.Open(env.Ctx, o)
	if err != nil {
		return reportRefusal(env, err)
	}
	// The client sees the capsule as the server (serverInfo).
	name, version := s.Capsule()
	srv := mcp.NewServer(s, mcp.Options{Name: name, Version: version})
	if addr == "" {
		err = srv.ServeStdio(env.Ctx, env.Stdin, env.Stdout)
	} else {
		err = serveMCPHTTP(env, srv, addr)
	}
	srv.Close()
	code := closeSession(env, s, capsule.Outcome{Status: agent.ExitOK})
	if err != nil {
		fmt.Fprintf(env.Stderr, "mur: mcp: %v\n", err)
		return ExitFailed
	}
	return code
}

// serveMCPHTTP serves srv on addr until env.Ctx ends.
func serveMCPHTTP(env *Env, srv *mcp.Server, addr string) error {
	token := os.Getenv(mcpTokenEnv)
	made := token == ""
	if made {
		var err error
		if token, err = mcp.NewToken(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(token), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.Stderr, "mur: mcp: serving http://%s%s\n", ln.Addr(), mcp.Path)
	if made {
		fmt.Fprintf(env.Stderr, "mur: mcp: bearer token %s (set %s to choose it)\n", token, mcpTokenEnv)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err = <-done:
	case <-env.Ctx.Done():
		err = hs.Close()
		<-done
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
