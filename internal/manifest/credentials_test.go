package manifest

import (
	"testing"

	"github.com/murmur/mur/internal/diag"
)

func TestCheckCredentials(t *testing.T) {
	src := `name: c
version: "1"
artifacts:
  - name: murmur/driver-anthropic
    version: "1"
    runtime: driver
    gateway: {endpoint: "https://api.anthropic.com", api_key: "${ANTHROPIC_API_KEY}"}
  - name: murmur/driver-openai
    version: "1"
    runtime: driver
    gateway: {endpoint: "https://api.openai.com", api_key: "${OPENAI_API_KEY}"}
  - name: a/search
    version: "1"
    gateway: {endpoint: "https://api.tavily.com", api_key: "${TAVILY_API_KEY}"}
  - name: a/lit
    version: "1"
    gateway: {endpoint: "https://x.com", api_key: sk-literal}
  - name: a/local
    version: "1"
    gateway: {endpoint: "http://localhost:1", keyless: true}
  - name: a/ctl
    version: "1"
    gateway: {endpoint: "https://y.com", api_key: "${CTL_KEY}"}
inference:
  model: m
  driver: {artifact: murmur/driver-anthropic}
  alternates:
    - {name: gpt, model: g, driver: {artifact: murmur/driver-openai}}
control:
  settings: [inference.driver]
  secrets: [CTL_KEY]
`
	c := mustParse(t, src)
	tests := []struct {
		name   string
		config map[string]bool
		env    map[string]bool
		want   map[string]string
		codes  []diag.Code
		absent []diag.Code
	}{
		{
			name:   "config wins, env warns, unset refuses",
			config: map[string]bool{"ANTHROPIC_API_KEY": true},
			env:    map[string]bool{"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true},
			want: map[string]string{"murmur/driver-anthropic": KeyFromConfig, "murmur/driver-openai": KeyFromEnv,
				"a/search": KeyUnset, "a/lit": KeyLiteral, "a/local": KeyKeyless, "a/ctl": KeyFromController},
			codes:  []diag.Code{diag.SecKeyFromEnv, diag.ManInvalid},
			absent: []diag.Code{diag.RunAlternateUnavailable},
		},
		{
			name:   "unset alternate is staged unavailable",
			env:    map[string]bool{"ANTHROPIC_API_KEY": true, "TAVILY_API_KEY": true},
			want:   map[string]string{"murmur/driver-openai": KeyUnset, "a/search": KeyFromEnv},
			codes:  []diag.Code{diag.RunAlternateUnavailable, diag.SecKeyFromEnv},
			absent: []diag.Code{diag.ManInvalid},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts, ds := CheckCredentials(c, CredentialLookup{
				Config: func(n string) bool { return tt.config[n] },
				Env:    func(n string) bool { return tt.env[n] },
			})
			got := map[string]string{}
			for _, s := range sts {
				got[s.Artifact] = s.Source
			}
			for a, src := range tt.want {
				if got[a] != src {
					t.Errorf("%s: source %q, want %q", a, got[a], src)
				}
			}
			for _, code := range tt.codes {
				if !ds.Has(code) {
					t.Errorf("want %s in %v", code, ds)
				}
			}
			for _, code := range tt.absent {
				if ds.Has(code) {
					t.Errorf("unexpected %s in %v", code, ds)
				}
			}
		})
	}
}

// One list of credential-shaped names serves W-SEC-024 and the shell's
// environment rows.
func TestCredentialShaped(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"MY_API_KEY", true}, {"xapikey", true}, {"TOKENIZER_PATH", true}, {"SECRET_TOKEN_X", true}, {"db_password_file", true},
		{"SIGNING_KEY", true}, {"KEY_ID", true}, {"SMTP_PASS", true}, {"DB_PWD", true}, {"GCP_CREDENTIALS", true},
		{"GCP_CREDENTIAL", true}, {"SENTRY_DSN", true}, {"BASIC_AUTH", true}, {"AUTH_HEADER", true}, {"app.creds", true},
		{"KEYBOARD", false}, {"MONKEY", false}, {"PASSAGE", false}, {"AUTHOR", false}, {"PATH", false}, {"AWS_REGION", false},
	}
	for _, tt := range tests {
		if got := CredentialShaped(tt.name); got != tt.want {
			t.Errorf("CredentialShaped(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
