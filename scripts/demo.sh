#!/usr/bin/env bash
# demo.sh: set up and run the hello capsule offline, end to end: build mur
# and the WebAssembly artifacts from source, build + publish them to a
# store, install them into capsules/hello (pinned in murmur.lock), start a
# provider double on loopback, and run the capsule. Nothing leaves this
# machine. Everything it writes lives under build/demo/ (its own HOME, so
# your ~/.murmur is untouched).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.d/20-node.sh >/dev/null
make --no-print-directory build >/dev/null
# Only the two components this capsule installs, stripped of symbols.
GOFLAGS=-ldflags=-s bash tools/guest/build.sh drivers/driver-openai examples/file-go >/dev/null

demo=$root/build/demo
rm -rf "$demo"
mkdir -p "$demo/home" "$demo/src"
# Built before HOME moves: Go's caches live under the real HOME.
go build -o "$demo/providerd" ./tools/providerd
export HOME=$demo/home
mur=$root/bin/mur

# Package each artifact: its murmur.yaml beside the component built from
# source, then build (reproducible .mur.zip) and publish to the global store.
for dir in drivers/driver-openai examples/file-go; do
  name=$(basename "$dir")
  mkdir -p "$demo/src/$name"
  cp "$dir/murmur.yaml" "build/guests/$name.wasm" "$demo/src/$name/"
  "$mur" build "$demo/src/$name" -o "$demo/$name.mur.zip" >/dev/null
  "$mur" publish "$demo/$name.mur.zip" --scope murmur >/dev/null
done
"$mur" config set -g credentials.OPENAI_API_KEY offline-demo-key

# The provider double takes a free loopback port; the demo's copy of the
# capsule points its gateway there.
"$demo/providerd" -script capsules/hello/provider-script.json -addr 127.0.0.1:0 >"$demo/providerd.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
url=
for _ in $(seq 100); do
  url=$(sed -n 's/^providerd: serving .* on \(http:[^ ]*\)$/\1/p' "$demo/providerd.log")
  [ -n "$url" ] && break
  kill -0 $pid 2>/dev/null || { cat "$demo/providerd.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "demo: the provider double did not start" >&2; exit 1; }

cap=$demo/hello
cp -r capsules/hello "$cap"
sed -i "s|http://127.0.0.1:18080|$url|" "$cap/murmur.yaml"
(cd "$cap" && "$mur" install)

echo "--- mur run (capsules/hello, offline provider double on $url)"
cd "$cap"
set +e
"$mur" run --task "Write a short hello note in notes/hello.md and check it."
code=$?
set -e
echo "--- the work folder:"
find workdir -type f | sed 's/^/  /'
exit $code
