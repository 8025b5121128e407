#!/usr/bin/env bash
# make test-mcp-js: mur mcp against the official MCP Inspector CLI (stdio,
# and streamable HTTP with the bearer token) and the MCP conformance suite
# (over HTTP through token-proxy.mjs, checked against
# conformance-baseline.yml). Usage: run.sh MUR GUEST_OUT
set -euo pipefail
mur=$(realpath "$1")
guests=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
inspector="$here/node_modules/.bin/mcp-inspector-cli"
conformance="$here/node_modules/.bin/conformance"

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work/home"
export MUR_MCP_JS_KEY=sk-mcp-js-0123456789
mkdir -p "$HOME" "$work/cap"

# A capsule with the echo-go and file-go WASM tools and ls as a shell tool.
for a in drivers/driver-openai examples/echo-go examples/file-go; do
  n=$(basename "$a")
  mkdir -p "$work/src/$n"
  cp "$here/../../$a/murmur.yaml" "$work/src/$n/"
  cp "$guests/$n.wasm" "$work/src/$n/"
  "$mur" build "$work/src/$n" -o "$work/$n.mur.zip" >/dev/null
  "$mur" publish "$work/$n.mur.zip" --scope murmur >/dev/null
done
cat >"$work/cap/murmur.yaml" <<'YAML'
name: mcp-js
version: "0.1.0"
artifacts:
  - name: murmur/driver-openai
    version: "0.1.0"
    runtime: driver
    gateway:
      endpoint: http://127.0.0.1:9/v1
      api_key: ${MUR_MCP_JS_KEY}
  - name: murmur/echo-go
    version: "0.1.0"
    runtime: tool
  - name: murmur/file-go
    version: "0.1.0"
    runtime: tool
capabilities:
  shell:
    allow: [ls]
inference:
  model: gpt-4o-mini
  driver:
    artifact: murmur/driver-openai
YAML
(cd "$work/cap" && "$mur" install >/dev/null)
man="$work/cap/murmur.yaml"

fail() { echo "test-mcp-js: $*" >&2; exit 1; }
# expect NAME OUTPUT REGEXP
expect() { grep -Eq -- "$3" <<<"$2" || fail "$1: output does not match $3:"$'\n'"$2"; }

# The Inspector CLI reads its own package.json by a path relative to the
# working directory (../package.json), so it runs from node_modules.
cd "$here/node_modules"
echo "inspector: stdio"
out=$("$inspector" --cli "$mur" mcp --manifest "$man" --method tools/list 2>&1)
expect tools/list "$out" '"name": "echo-go"'
expect tools/list "$out" '"name": "file-go"'
expect tools/list "$out" '"name": "ls"'
out=$("$inspector" --cli "$mur" mcp --manifest "$man" --method tools/call --tool-name echo-go --tool-arg text=hello-inspector 2>&1)
expect tools/call "$out" 'hello-inspector'
out=$("$inspector" --cli "$mur" mcp --manifest "$man" --method tools/call --tool-name file-go --tool-arg op=write path=note.txt content=written 2>&1)
expect "tools/call file-go" "$out" 'wrote note.txt'
# ls runs in the session's sandbox, which keeps / out of its reach.
out=$("$inspector" --cli "$mur" mcp --manifest "$man" --method tools/call --tool-name ls --tool-arg command=/ 2>&1)
expect "tools/call ls /" "$out" "cannot open directory '/': Permission denied"
expect "tools/call ls /" "$out" '"isError": true'
out=$("$inspector" --cli "$mur" mcp --manifest "$man" --method tools/call --tool-name nosuch 2>&1) && fail "tools/call nosuch succeeded"
expect "tools/call nosuch" "$out" 'E-MCP-004'

echo "inspector: http"
export MUR_MCP_TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
(cd "$work/cap" && exec "$mur" mcp --http 127.0.0.1:0 2>"$work/mcp.err") &
pids+=($!)
url=""
for _ in $(seq 1 600); do
  url=$(sed -n 's/^mur: mcp: serving //p' "$work/mcp.err")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || fail "mur mcp --http did not start: $(cat "$work/mcp.err")"
out=$("$inspector" --cli "$url" --transport http --header "Authorization: Bearer $MUR_MCP_TOKEN" --method tools/call --tool-name echo-go --tool-arg text=over-http 2>&1)
expect "http tools/call" "$out" 'over-http'
out=$("$inspector" --cli "$url" --transport http --header "Authorization: Bearer wrong" --method tools/list 2>&1) && fail "a wrong token was served"
expect "http wrong token" "$out" 'E-MCP-001'

echo "conformance"
node "$here/token-proxy.mjs" "$url" "$MUR_MCP_TOKEN" >"$work/proxy.out" &
pids+=($!)
purl=""
for _ in $(seq 1 100); do
  purl=$(head -1 "$work/proxy.out")
  [ -n "$purl" ] && break
  sleep 0.1
done
[ -n "$purl" ] || fail "token-proxy did not start"
"$conformance" server --url "$purl" --expected-failures "$here/conformance-baseline.yml" -o "$work/conformance" | sed -n '/=== SUMMARY ===/,$p'
echo "test-mcp-js: ok"
