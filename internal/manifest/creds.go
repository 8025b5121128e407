package manifest

import (
	"path"
	"regexp"
	"strings"
)

// CredentialBackstop lists the glob patterns of variable names the runtime
// strips from every environment it builds, whatever a manifest allows: the
// well-known provider and cloud credentials. Another area's environment
// builder uses the same list.
var CredentialBackstop = []string{
	"*_API_KEY", "*_SECRET_KEY", "*_SECRET_ACCESS_KEY", "*_ACCESS_TOKEN", "*_AUTH_TOKEN",
	"AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN",
	"NPM_TOKEN", "HF_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET",
}

func stripEnv(c *Capabilities) []string {
	if c == nil || c.Shell == nil {
		return nil
	}
	return c.Shell.StripEnv
}

// matchesBackstop reports the pattern (backstop or strip_env) name matches.
func matchesBackstop(name string, strip []string) (string, bool) {
	for _, pats := range [][]string{CredentialBackstop, strip} {
		for _, p := range pats {
			if ok, _ := path.Match(p, name); ok {
				return p, true
			}
		}
	}
	return "", false
}

var credSegments = map[string]bool{"KEY": true, "PASS": true, "PASSWD": true, "CREDENTIALS": true, "CREDS": true, "DSN": true, "AUTH": true, "PWD": true}

var segSplit = regexp.MustCompile(`[_\-.]`)

// credentialShaped is the W-SEC-024 rule: contains api_key, token, secret
// or password (any case), or has a credential segment.
func credentialShaped(name string) bool {
	l := strings.ToLower(name)
	for _, w := range []string{"api_key", "apikey", "token", "secret", "password"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	for _, s := range segSplit.Split(strings.ToUpper(name), -1) {
		if credSegments[s] {
			return true
		}
	}
	return false
}
