#!/usr/bin/env bash
# Import boundaries: only internal/wasm/cm may use cgo.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.go' | grep -v '^internal/wasm/cm/' | xargs grep -l '^import "C"' 2>/dev/null || true)
if [ -n "$bad" ]; then
  echo "only internal/wasm/cm may import \"C\"; found in:"; echo "$bad"; exit 1
fi
echo "import boundaries ok"
