#!/usr/bin/env bash
# build.sh DIR... builds each guest directory into a murmur component,
# $MUR_GUEST_OUT/<name>.wasm (default: build/guests/ at the repository
# root), and puts a copy beside its murmur.yaml as DIR/<name>.wasm, the
# file its requires_files names, so `mur build DIR` packs it as is. A
# directory holds a murmur.yaml artifact manifest (its name and runtime
# pick the file name and the world) and either Go sources (a main package
# using sdk/go) or an index.js ES module.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${MUR_GUEST_OUT:-$root/build/guests}

if [ $# -eq 0 ]; then
  echo "usage: tools/guest/build.sh DIR..." >&2
  exit 2
fi
if [ ! -d "$here/node_modules/@bytecodealliance/jco" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

mkdir -p "$out"
# The output directory ignores itself, so built components never reach git.
[ -f "$out/.gitignore" ] || printf '*\n' > "$out/.gitignore"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/wasmlink" ./tools/wasmlink)

# A guest is rebuilt only when what it is built from changed: its own
# folder, and everything every guest shares — the Go SDK, the linker, this
# toolchain (its scripts and pinned packages), the WIT, go.mod/go.sum, the
# Go and Node versions and GOFLAGS. Every make target that needs the
# guests depends on `make guests` (and drivers, hooks), so without this a
# CI run rebuilt every component a dozen times: componentize-js alone
# takes ~25 s of CPU per JavaScript guest. The stamp beside the output
# holds the hash; it is written after the component, so a build killed
# half way is redone.
hash_files() { # hash_files PATH...: one hash over every file's path and bytes
  find "$@" -type f ! -path '*/node_modules/*' ! -name '*.wasm' -print0 2>/dev/null |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-64
}
shared=$(cd "$root" && { hash_files sdk/go tools/wasmlink tools/guest wit go.mod go.sum; go version; node --version; echo "GOFLAGS=${GOFLAGS:-}"; } | sha256sum | cut -c1-64)
mkdir -p "$out/.stamps"

field() { # field FILE KEY: a top-level scalar of a murmur.yaml
  sed -n "s/^$2:[[:space:]]*[\"']\{0,1\}\([^\"'#]*[^\"'#[:space:]]\)[\"']\{0,1\}[[:space:]]*\(#.*\)\{0,1\}$/\1/p" "$1" | head -n 1
}

for dir in "$@"; do
  dir=${dir%/}
  manifest="$dir/murmur.yaml"
  if [ ! -f "$manifest" ]; then
    echo "build.sh: $dir: no murmur.yaml" >&2
    exit 1
  fi
  name=$(field "$manifest" name)
  role=$(field "$manifest" runtime)
  # A process driver is a runtime: driver artifact exporting
  # murmur:driver/process rather than murmur:tool/run; its Go source uses
  # the processdriver SDK package, which says so.
  if [ "$role" = driver ] && grep -qs 'murmur/mur/sdk/go/processdriver"' "$dir"/*.go; then
    role=process-driver
  fi
  # An ACT component is a runtime: tool artifact whose Go source uses
  # sdk/go/act (and sdk/go/act/sessions for a session provider).
  if [ "$role" = tool ] && grep -qs 'murmur/mur/sdk/go/act"' "$dir"/*.go; then
    role=act
    if grep -qs 'murmur/mur/sdk/go/act/sessions"' "$dir"/*.go; then
      role=act-sessions
    fi
  fi
  if [ -z "$name" ] || [ -z "$role" ]; then
    echo "build.sh: $manifest: needs name: and runtime:" >&2
    exit 1
  fi
  target="$out/$name.wasm"
  stamp="$out/.stamps/$name"
  want=$(printf '%s %s %s\n' "$shared" "$role" "$(hash_files "$dir")" | sha256sum | cut -c1-64)
  if [ -f "$target" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    cmp -s "$target" "$dir/$name.wasm" || cp "$target" "$dir/$name.wasm"
    echo "$target (up to date)"
    continue
  fi
  rm -f "$stamp"
  if compgen -G "$dir/*.go" > /dev/null; then
    (cd "$dir" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o "$tmp/$name.core.wasm" .)
    "$tmp/wasmlink" "$tmp/$name.core.wasm" "$tmp/$name.linked.wasm"
    node "$here/componentize.mjs" --role "$role" --core "$tmp/$name.linked.wasm" --out "$target"
    case $role in act | act-sessions)
      # The act:component section (spec 003), from the artifact's manifest.
      (cd "$root" && go run ./sdk/go/act/cmd/actsection -name "$name" -version "$(field "$manifest" version)" \
        -description "$(field "$manifest" description)" "$target")
    esac
  elif [ -f "$dir/index.js" ]; then
    node "$here/componentize.mjs" --role "$role" --js "$dir/index.js" --out "$target"
  else
    echo "build.sh: $dir: no Go sources and no index.js" >&2
    exit 1
  fi
  cp "$target" "$dir/$name.wasm"
  echo "$want" > "$stamp"
  echo "$target"
done
