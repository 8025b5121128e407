#!/usr/bin/env bash
# Gives every fuzz target in the repository real fuzzing time (make fuzz):
# each target FUZZ_SHORT, the parsers of untrusted input (LONG below: the
# .mur.zip unpacker, the manifest decoders, the stream and answer parsers,
# the allow-list parser, the door's request bodies, the read-only checks)
# FUZZ_LONG. Targets are found in the tree, so a new one is fuzzed without
# an edit here. FUZZ_MATCH (a grep -E pattern over "dir target") narrows
# the run. Prints each target's wall time and the total.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
short=${FUZZ_SHORT:-3s}
long=${FUZZ_LONG:-12s}
match=${FUZZ_MATCH:-.}
# A new input that widens coverage is minimised for up to 60 s by default,
# which stalls a short run; CI wants the fuzzing time, not small corpora.
minimize=${FUZZ_MINIMIZE:-2s}

LONG="FuzzOpenExtract FuzzCapsule FuzzArtifact FuzzAnthropicStream FuzzOpenAIStream
FuzzServe FuzzStreams FuzzStreamReads FuzzParseResponse FuzzParseAllowEntry FuzzRPCBody
FuzzCheckLine FuzzCheckInput FuzzResolverAnswer FuzzMCPEntry"

targets=$(git ls-files '*_test.go' | xargs grep -H -o '^func Fuzz[A-Za-z0-9_]*' |
  sed 's#^\(.*\)/[^/]*_test\.go:func #\1 #' | sort -u)

# A long-budget name that no longer exists would silently fall back to
# nothing; refuse instead.
for t in $LONG; do
  if ! grep -q " $t\$" <<<"$targets"; then
    echo "scripts/fuzz.sh: $t is in LONG but no package defines it; fix the list" >&2
    exit 1
  fi
done

failed=()
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
cache=$($GO env GOCACHE)/fuzz
total_start=$(date +%s)
# One instrumented test binary per package (go test -c -fuzz), then each of
# its targets from that binary: the build, not the fuzzing, is what a
# package costs, so it is paid once.
for dir in $(awk '{print $1}' <<<"$targets" | sort -u); do
  pkg_targets=$(awk -v d="$dir" '$1 == d {print $2}' <<<"$targets" | while read -r t; do
    if grep -Eq -- "$match" <<<"$dir $t"; then echo "$t"; fi; done)
  [ -n "$pkg_targets" ] || continue
  start=$(date +%s)
  bin=$bins/$(tr / _ <<<"$dir").test
  if ! $GO test -c -fuzz=. -o "$bin" "./$dir" >"/tmp/mur-fuzz-build-$(tr / _ <<<"$dir").log" 2>&1; then
    failed+=("$dir: build (log: /tmp/mur-fuzz-build-$(tr / _ <<<"$dir").log)")
    tail -20 "/tmp/mur-fuzz-build-$(tr / _ <<<"$dir").log" >&2
    continue
  fi
  printf '%-28s %-32s %4s %4ss\n' "$dir" "(build)" "" "$(( $(date +%s) - start ))"
  importpath=$($GO list "./$dir")
  for target in $pkg_targets; do
    budget=$short
    if grep -qw -- "$target" <<<"$LONG"; then budget=$long; fi
    start=$(date +%s)
    log=/tmp/mur-fuzz-$target.log
    run() {
      (cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^${target}\$" -test.fuzztime="$budget" \
        -test.fuzzminimizetime="$minimize" -test.fuzzcachedir="$cache/$importpath" -test.timeout=10m) >"$log" 2>&1
    }
    # verdict: 0 the run passed, 2 it ended on a bare "context deadline
    # exceeded", 1 anything else (a failing input, a panic, another error).
    verdict() {
      run && return 0
      grep -q "Failing input written\|panic:" "$log" && return 1
      grep -q "context deadline exceeded" "$log" && return 2
      return 1
    }
    # The fuzzer can end a run with a bare deadline when the budget expires
    # while a worker is busy minimising a new input (seen twice in a row on
    # a machine loaded 15-30x). That names no input and found no crash, so
    # it is retried once and, if the retry ends the same way, reported
    # without failing.
    v=0; verdict || v=$?
    if [ "$v" = 2 ]; then
      v=0; verdict || v=$?
      if [ "$v" = 2 ]; then
        echo "fuzz: $dir $target: the fuzzer's deadline ended a busy worker twice; no failing input (log: $log)" >&2
        v=0
      fi
    fi
    if [ "$v" != 0 ]; then
      failed+=("$dir $target (log: $log)")
      tail -20 "$log" >&2
    fi
    printf '%-28s %-32s %4s %4ss\n' "$dir" "$target" "$budget" "$(( $(date +%s) - start ))"
  done
done
echo "fuzz total: $(( $(date +%s) - total_start ))s"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'fuzz failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
