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

// credSegments are the name segments (separated by _ - or .) that make a
// name credential-shaped on their own.
var credSegments = map[string]bool{"KEY": true, "PASS": true, "PASSWD": true, "PWD": true, "CREDENTIALS": true, "CREDENTIAL": true, "CREDS": true, "DSN": true, "AUTH": true}

var segSplit = regexp.MustCompile(`[_\-.]`)

// CredentialShaped is the W-SEC-024 rule, the one list of credential-shaped
// names: the name contains api_key, apikey, token, secret or password, or
// has a segment KEY, PASS, PASSWD, PWD, CREDENTIALS, CREDENTIAL, CREDS, DSN
// or AUTH (any case). The shell layer strips the same names from every
// subprocess environment.
func CredentialShaped(name string) bool {
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
