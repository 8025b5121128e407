package component

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/murmur/mur/internal/wasm/cm"
)

// TestHookLoadingRules: on-task-start and on-task-end are optional, every
// other handler is required and named when missing, and a hook without the
// versioned interface fails with the version error.
func TestHookLoadingRules(t *testing.T) {
	lookupWithout := func(missing ...string) func(string) (*cm.Func, error) {
		return func(fn string) (*cm.Func, error) {
			for _, m := range missing {
				if fn == m {
					return nil, fmt.Errorf("%w: no %s", errMissingFunc, fn)
				}
			}
			return &cm.Func{}, nil
		}
	}
	cases := []struct {
		name    string
		missing []string
		wantErr error
		naming  string
		has     int
	}{
		{"all nine", nil, nil, "", 9},
		{"no optional handlers", []string{OnTaskStart, OnTaskEnd}, nil, "", 7},
		{"no on-task-end only", []string{OnTaskEnd}, nil, "", 8},
		{"missing on-inference", []string{OnInference}, ErrMissingHandler, "on-inference", 0},
		{"missing on-session-end", []string{OnTaskEnd, OnSessionEnd}, ErrMissingHandler, "on-session-end", 0},
		{"missing on-stage", []string{OnStage}, ErrMissingHandler, "on-stage", 0},
	}
	t.Run("interface at another version", func(t *testing.T) {
		_, err := resolveHandlers("ana/hook", func(string) (*cm.Func, error) {
			return nil, fmt.Errorf("%w: exports murmur:hook/lifecycle@0.4.0", ErrVersion)
		})
		if !errors.Is(err, ErrVersion) || errors.Is(err, ErrMissingHandler) {
			t.Fatalf("err = %v, want the version error", err)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			funcs, err := resolveHandlers("ana/hook", lookupWithout(c.missing...))
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.naming) {
					t.Fatalf("err = %v, want %v naming %s", err, c.wantErr, c.naming)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(funcs) != c.has {
				t.Fatalf("resolved %d handlers, want %d", len(funcs), c.has)
			}
			for _, m := range c.missing {
				if funcs[m] != nil {
					t.Errorf("%s resolved though missing", m)
				}
			}
		})
	}
}
