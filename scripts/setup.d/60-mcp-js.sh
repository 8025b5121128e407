#!/usr/bin/env bash
# The official MCP clients mur mcp is tested with (make test-mcp-js): the
# MCP Inspector CLI (@modelcontextprotocol/inspector-cli) and the MCP
# conformance suite (@modelcontextprotocol/conformance), pinned in
# tools/mcp-js/package-lock.json. Idempotent: npm ci runs only when the
# installed tree is missing or older than the lock file. Node itself comes
# from 20-node.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

lock=tools/mcp-js/package-lock.json
stamp=tools/mcp-js/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  (cd tools/mcp-js && npm ci --no-audit --no-fund --loglevel=error)
fi
