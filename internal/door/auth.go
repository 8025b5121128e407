package door

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/murmur/mur/internal/manifest"
)

// The scopes a token may hold beyond the A2A method names (spec 004
// network.authentication).
const (
	ScopeWatchSession = "murmur.WatchSession"
	ScopeStopSession  = "murmur.StopSession"
	ScopeFiles        = "resources/files"
)

// The door's JSON-RPC methods. The A2A 1.0 names come from the
// specification; the murmur.* ones are the door's own.
const (
	MethodSendMessage          = "SendMessage"
	MethodSendStreamingMessage = "SendStreamingMessage"
	MethodGetTask              = "GetTask"
	MethodListTasks            = "ListTasks"
	MethodCancelTask           = "CancelTask"
	MethodSubscribeToTask      = "SubscribeToTask"
	MethodGetExtendedAgentCard = "GetExtendedAgentCard"
	MethodWatchSession         = ScopeWatchSession
	MethodStopSession          = ScopeStopSession
)

// AllScopes is what the operator token holds.
var AllScopes = []string{
	MethodSendMessage, MethodSendStreamingMessage, ScopeWatchSession, MethodGetTask,
	MethodListTasks, MethodCancelTask, MethodSubscribeToTask, ScopeStopSession, ScopeFiles,
}

// OperatorName is the reserved name of the token holding every scope.
const OperatorName = "operator"

// Auth is a door's network.authentication: the tokens this session minted.
type Auth struct {
	Operator    string
	Credentials map[string]Credential
}

// Credential is one declared credential's token and scopes.
type Credential struct {
	Token  string
	Scopes []string
}

// MintAuth mints the operator token and one token per declared credential.
// It returns nil for a door without network.authentication.
func MintAuth(a *manifest.Authentication) (*Auth, error) {
	if a == nil {
		return nil, nil
	}
	op, err := mintToken()
	if err != nil {
		return nil, err
	}
	out := &Auth{Operator: op, Credentials: map[string]Credential{}}
	for name, c := range a.Credentials {
		if name == OperatorName {
			return nil, fmt.Errorf("network.authentication.credentials.%s: the name operator is reserved", name)
		}
		tok, err := mintToken()
		if err != nil {
			return nil, err
		}
		var scopes []string
		if c != nil {
			scopes = slices.Clone(c.Scopes)
		}
		out.Credentials[name] = Credential{Token: tok, Scopes: scopes}
	}
	return out, nil
}

func mintToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("minting a door token: %w", err)
	}
	return "mur_" + hex.EncodeToString(b[:]), nil
}

// identify finds the caller a bearer token stands for. Every comparison
// runs, so how long it takes says nothing about which token came close.
func (a *Auth) identify(header string) (caller, []string, bool) {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || tok == "" {
		return caller{}, nil, false
	}
	var found caller
	var scopes []string
	hit := false
	if subtle.ConstantTimeCompare([]byte(tok), []byte(a.Operator)) == 1 {
		found, scopes, hit = caller{name: OperatorName, seesAll: true}, AllScopes, true
	}
	for _, name := range a.names() {
		c := a.Credentials[name]
		if subtle.ConstantTimeCompare([]byte(tok), []byte(c.Token)) == 1 {
			found, scopes, hit = caller{name: name}, c.Scopes, true
		}
	}
	return found, scopes, hit
}

func (a *Auth) names() []string {
	names := make([]string, 0, len(a.Credentials))
	for n := range a.Credentials {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lines renders the tokens as mur run prints them, operator first.
func (a *Auth) Lines() []string {
	if a == nil {
		return nil
	}
	lines := []string{fmt.Sprintf("door token operator: %s", a.Operator)}
	for _, n := range a.names() {
		c := a.Credentials[n]
		lines = append(lines, fmt.Sprintf("door token %s: %s (%s)", n, c.Token, strings.Join(c.Scopes, ", ")))
	}
	return lines
}
