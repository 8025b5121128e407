#!/usr/bin/env bash
# Import boundaries: only internal/wasm/cm may use cgo; the door and the
# lifecycle queue never reach up into the session that drives them.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.go' | grep -v '^internal/wasm/cm/' | xargs grep -l '^import "C"' 2>/dev/null || true)
if [ -n "$bad" ]; then
  echo "only internal/wasm/cm may import \"C\"; found in:"; echo "$bad"; exit 1
fi
up=$(go list -deps ./internal/door ./internal/lifecycle | grep -E '/internal/(capsule|session|agent|shell|sandbox)$' || true)
if [ -n "$up" ]; then
  echo "internal/door and internal/lifecycle must not depend on the session; they reach:"; echo "$up"; exit 1
fi
# The sandbox's helper starts once per sandboxed call: it stays small
# (docs/sandbox.md "The helper").
heavy=$(go list -deps ./cmd/mur-sandbox | grep -E '^(github\.com|golang\.org|gopkg\.in)/' | grep -vE '^golang\.org/x/sys/|^github\.com/murmur/mur/(cmd/mur-sandbox|internal/sandbox/helper)$' || true)
if [ -n "$heavy" ]; then
  echo "cmd/mur-sandbox must import only the standard library, golang.org/x/sys and internal/sandbox/helper; it reaches:"; echo "$heavy"; exit 1
fi
echo "import boundaries ok"
