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
make --no-print-directory build guests drivers >/dev/null

demo=$root/build/demo
rm -rf "$demo"
mkdir -p "$demo/home" "$demo/src"
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

cap=$demo/hello
cp -r capsules/hello "$cap"
(cd "$cap" && "$mur" install)

go build -o "$demo/providerd" ./tools/providerd
"$demo/providerd" -script "$cap/provider-script.json" -addr 127.0.0.1:18080 >"$demo/providerd.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q serving "$demo/providerd.log" && break; sleep 0.1; done

echo "--- mur run (capsules/hello, offline provider double on 127.0.0.1:18080)"
cd "$cap"
set +e
"$mur" run --task "Write a short hello note in notes/hello.md and check it."
code=$?
set -e
echo "--- the work folder:"
find workdir -type f | sed 's/^/  /'
exit $code
