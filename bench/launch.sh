#!/usr/bin/env bash
# launch.sh: mur run from process start to the provider's first request
# (warm compile cache), the turn after it, and the idle capsule's resident
# memory, over RUNS runs, interleaved with the floor: bench/floor, a static
# Go program making the same first POST (figures are reported as mur/floor
# ratios too). Builds mur and the components if missing, then runs
# bench/launchbench (which sets up its own HOME and provider double).
#
# It measures an installed copy of bin/mur, not bin/mur itself: the linker
# writes bin/mur through a shared mapping, which can leave it in the page
# cache in folios of up to 2 MiB, and on this kernel a fault maps the whole
# folio, so the same binary read 31.8-33.4 MB depending on how its last
# build was written. A copy (cp, install, a package manager's write) sits
# in 64 KiB folios, the kernel's fault-around size, as does a binary read
# cold from disk: VmRSS then counts the 64 KiB blocks the run touches.
# Pass -mur bin/mur to measure the file in place.
#
#   bash bench/launch.sh [launchbench flags, e.g. -runs 30 -ceiling,
#                         -before old-mur (a build before a change, interleaved)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
guests=${MUR_GUEST_OUT:-$root/build/guests}
go build -o bin/mur ./cmd/mur
CGO_ENABLED=0 go build -o bin/mur-sandbox ./cmd/mur-sandbox
if [[ ! -f $guests/driver-openai.wasm || ! -f $guests/file-go.wasm ]]; then
  make --no-print-directory guests drivers >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/launchbench" ./bench/launchbench
CGO_ENABLED=0 go build -o "$tmp/floor" ./bench/floor
echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
install -m 0755 bin/mur "$tmp/mur"
# The sandbox helper mur starts from beside itself, as make build ships it.
install -m 0755 bin/mur-sandbox "$tmp/mur-sandbox"
"$tmp/launchbench" -mur "$tmp/mur" -floor "$tmp/floor" -guests "$guests" -src "$root" "$@"
