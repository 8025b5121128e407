#!/usr/bin/env bash
# door.sh: a real `mur run` serving its door — the PSS of a fleet of idle
# capsules with their doors open, and 1,000 sequential tasks through one
# queue + sleep capsule (per-task latency, resident memory after task 100
# and after the last). Builds mur and the driver if missing, then runs
# bench/doorbench on an installed copy of bin/mur (see launch.sh for why a
# copy).
#
#   bash bench/door.sh [doorbench flags, e.g. -tasks 1000 -fleet 8]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
guests=${MUR_GUEST_OUT:-$root/build/guests}
go build -o bin/mur ./cmd/mur
if [[ ! -f $guests/driver-openai.wasm ]]; then
  make --no-print-directory drivers >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/doorbench" ./bench/doorbench
echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
install -m 0755 bin/mur "$tmp/mur"
"$tmp/doorbench" -mur "$tmp/mur" -guests "$guests" -src "$root" "$@"
