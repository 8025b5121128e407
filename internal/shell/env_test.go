package shell

import (
	"reflect"
	"strings"
	"testing"
)

func TestCredentialRule(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		// The backstop (manifest.CredentialBackstop).
		{"ANTHROPIC_API_KEY", true}, {"openai_api_key", true}, {"GITHUB_TOKEN", true}, {"GH_TOKEN", true},
		{"AWS_ACCESS_KEY_ID", true}, {"AWS_SECRET_ACCESS_KEY", true}, {"AWS_SESSION_TOKEN", true}, {"STRIPE_SECRET_KEY", true},
		{"AZURE_CLIENT_SECRET", true}, {"GOOGLE_APPLICATION_CREDENTIALS", true}, {"SLACK_AUTH_TOKEN", true},
		// Credential-shaped names.
		{"SERVICE_APIKEY", true}, {"TOKEN", true}, {"JWT_SECRET", true}, {"DB_PASSWORD", true}, {"PGPASSWORD", true},
		{"FTP_PASSWD", true}, {"MYSQL_PWD", true}, {"SSH_PRIVATE_KEY", true}, {"AWS_CREDENTIALS", true}, {"SENTRY_DSN", true},
		{"SSH_AUTH_SOCK", true}, {"DOCKER_AUTH_CONFIG", true}, {"my-creds", true},
		// Host credentials without a shaped name.
		{"DATABASE_URL", true}, {"APP_DATABASE_URL", true}, {"NETRC", true}, {"GPG_AGENT_INFO", true},
		// Everything else.
		{"PATH", false}, {"HOME", false}, {"USER", false}, {"LANG", false}, {"AWS_REGION", false},
		{"KEYBOARD", false}, {"GOPATH", false}, {"TERM", false},
	}
	for _, tt := range tests {
		if got := credential(tt.name); got != tt.want {
			t.Errorf("credential(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !IsCredentialName("HF_TOKEN") || IsCredentialName("TOKENIZER_PATH") {
		t.Error("IsCredentialName does not follow manifest.CredentialBackstop")
	}
}

func TestBuildEnvRows(t *testing.T) {
	host := []string{
		"PATH=/usr/bin", "HOME=/home/host", "USER=ana", "LOGNAME=ana", "LANG=C.UTF-8", "TERM=xterm",
		"CARGO_HOME=/c", "EDITOR=vi", "TOKENIZER_PATH=/t", "SIGNING_KEY=s", "AWS_REGION=eu", "AWS_PROFILE=p", "GITHUB_TOKEN=ghp", "TMPDIR=/host/tmp",
		"MURMUR_ARTIFACT_CONFIG=host", "GOFLAGS=-mod=mod", "NOT_IN_ANY_ROW=x",
	}
	base := Policy{
		HostEnv: host, Home: "/rec/home", Tmp: "/rec/tmp", RuntimeDir: "/run/s", RecordsDir: "/rec",
		Identity: [][2]string{{"MURMUR_CAPSULE_NAME", "cap"}, {"MURMUR_SESSION_ID", "ses_1"}},
	}
	tail := []string{"HOME=/rec/home", "USERPROFILE=/rec/home", "MURMUR_RUNTIME_DIR=/run/s", "MURMUR_RECORDS_DIR=/rec",
		"TMPDIR=/rec/tmp", "TMP=/rec/tmp", "TEMP=/rec/tmp"}
	row1 := []string{"PATH=/usr/bin", "HOME=/home/host", "USER=ana", "LOGNAME=ana", "LANG=C.UTF-8", "CARGO_HOME=/c", "TERM=xterm"}
	withHome := func(rows ...[]string) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r...)
		}
		// HOME keeps its row-1 position with row 5's value.
		for i, kv := range out {
			if kv == "HOME=/home/host" {
				out[i] = "HOME=/rec/home"
			}
		}
		var t2 []string
		for _, kv := range tail {
			if kv != "HOME=/rec/home" {
				t2 = append(t2, kv)
			}
		}
		return append(out, t2...)
	}
	tests := []struct {
		name   string
		mod    func(*Policy)
		req    envRequest
		want   []string
		wantTm bool
	}{
		{"rows 1 5 6 7 for a native tool", nil, envRequest{}, withHome(row1), false},
		{"row 2 identity for a shell call", nil, envRequest{identity: true},
			withHome(row1, []string{"MURMUR_CAPSULE_NAME=cap", "MURMUR_SESSION_ID=ses_1"}), false},
		{"row 3 baseline_env patterns", func(p *Policy) { p.BaselineEnv = []string{"AWS_*", "EDITOR"} }, envRequest{},
			withHome(row1, []string{"AWS_PROFILE=p", "AWS_REGION=eu", "EDITOR=vi"}), false},
		{"row 3 never brings a credential back", func(p *Policy) { p.BaselineEnv = []string{"GITHUB_*", "*"} }, envRequest{},
			withHome(row1, []string{"AWS_PROFILE=p", "AWS_REGION=eu", "EDITOR=vi", "GOFLAGS=-mod=mod", "NOT_IN_ANY_ROW=x"}), false},
		{"row 4 strip_env removes baseline names too", func(p *Policy) {
			p.BaselineEnv = []string{"AWS_*"}
			p.StripEnv = []string{"AWS_*", "USER", "LOGNAME"}
		}, envRequest{},
			withHome([]string{"PATH=/usr/bin", "HOME=/home/host", "LANG=C.UTF-8", "CARGO_HOME=/c", "TERM=xterm"}), false},
		{"row 7 mapped tmp", func(p *Policy) { p.TmpMapped = true }, envRequest{}, nil, true},
		{"execute env before the strip", nil, envRequest{extra: [][2]string{{"FOO", "1"}, {"X_API_KEY", "k"}, {"TMPDIR", "/evil"}}},
			withHome(row1, []string{"FOO=1"}), false},
		{"native config and state", nil, envRequest{native: &NativeTool{Config: []byte(`{"a":1}`), StateDir: "/state/x"}},
			append(withHome(row1), "MURMUR_ARTIFACT_CONFIG={\"a\":1}", "MURMUR_STATE_DIR=/state/x"), false},
		{"native without config has no variable", nil, envRequest{native: &NativeTool{}}, withHome(row1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			if tt.mod != nil {
				tt.mod(&p)
			}
			s := &Session{p: p, hostEnv: parseEnv(p.HostEnv)}
			got := s.buildEnv(tt.req)
			if tt.wantTm {
				m := parseEnv(got)
				for _, k := range []string{"TMPDIR", "TMP", "TEMP"} {
					if m[k] != "/tmp" {
						t.Errorf("%s = %q, want /tmp", k, m[k])
					}
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("env\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// Issue #12 item 4: a command in the real sandbox starts with exactly the
// spec's rows, in their order, followed by the proxy variables — the one
// deviation, documented in docs/sandbox.md and --explain-scope (curl
// cannot resolve a name itself without socketpair(AF_UNIX)) — and nothing
// else.
func TestContainedEnvIsTheRows(t *testing.T) {
	f, _ := contained(t, nil)
	// /proc/$$/environ is what execve gave bash, before bash adds PWD,
	// SHLVL and _ to what it exports.
	r := f.call(t, "bash", `tr '\0' '\n' < /proc/$$/environ`)
	if r.ExitCode != 0 {
		t.Fatalf("environ: %q", r.Text())
	}
	got := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	want := f.s.buildEnv(envRequest{identity: true})
	if len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) {
		t.Fatalf("the command's environment\n got %q\nwant %q (the spec's rows) first", got, want)
	}
	var names []string
	for _, kv := range got[len(want):] {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	proxy := []string{"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "no_proxy", "NO_PROXY"}
	if !reflect.DeepEqual(names, proxy) {
		t.Errorf("after the rows the command sees %q, want only the proxy variables %q", names, proxy)
	}
}
