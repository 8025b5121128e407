#!/usr/bin/env bash
# The independent fake provider the drivers are tested against
# (make test-drivers-aimock): @copilotkit/aimock, pinned in
# tools/aimock/package-lock.json. Idempotent: npm ci runs only when the
# installed tree is missing or older than the lock file. Node itself comes
# from 20-node.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

lock=tools/aimock/package-lock.json
stamp=tools/aimock/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  (cd tools/aimock && npm ci --no-audit --no-fund --loglevel=error)
fi
