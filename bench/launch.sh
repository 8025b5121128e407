#!/usr/bin/env bash
# launch.sh: mur run from process start to the provider's first request
# (warm compile cache), the turn after it, and the idle capsule's resident
# memory, over RUNS runs. Builds mur and the components if missing, then
# runs bench/launchbench (which sets up its own HOME and provider double).
#
#   bash bench/launch.sh [launchbench flags, e.g. -runs 30 -ceiling]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
guests=${MUR_GUEST_OUT:-$root/build/guests}
go build -o bin/mur ./cmd/mur
if [[ ! -f $guests/driver-openai.wasm || ! -f $guests/file-go.wasm ]]; then
  make --no-print-directory guests drivers >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/launchbench" ./bench/launchbench
echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
"$tmp/launchbench" -mur bin/mur -guests "$guests" -src "$root" "$@"
