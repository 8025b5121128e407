#!/usr/bin/env bash
# The real harness CLIs the process drivers are tested against (make
# test-process-cli): Claude Code (@anthropic-ai/claude-code) and the Codex
# CLI (@openai/codex), pinned in tools/harness-cli/package-lock.json. Both
# ship native binaries as optional npm dependencies (about 800 MB
# installed). Idempotent: npm ci runs only when the installed tree is
# missing or older than the lock file. Node itself comes from 20-node.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

lock=tools/harness-cli/package-lock.json
stamp=tools/harness-cli/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  (cd tools/harness-cli && npm ci --no-audit --no-fund --loglevel=error)
fi
