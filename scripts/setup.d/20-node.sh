#!/usr/bin/env bash
# Node and the pinned guest toolchain (jco, componentize-js) for building
# WASM guests: `make guests`. Idempotent: npm ci runs only when the
# installed tree is missing or older than the lock file.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

lock=tools/guest/package-lock.json
stamp=tools/guest/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  (cd tools/guest && npm ci --no-audit --no-fund --loglevel=error)
fi
