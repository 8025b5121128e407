#!/usr/bin/env bash
# The official A2A JS client the door is tested with (make test-door-js):
# @a2a-js/sdk, pinned in tools/a2a-js/package-lock.json. Idempotent: npm ci
# runs only when the installed tree is missing or older than the lock file.
# Node itself comes from 20-node.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

lock=tools/a2a-js/package-lock.json
stamp=tools/a2a-js/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  (cd tools/a2a-js && npm ci --no-audit --no-fund --loglevel=error)
fi
