#!/usr/bin/env bash
# Runs what `make ci` runs — the README's test command (make test), make
# check, then every CI_TARGETS entry — one target at a time, and keeps going
# after a failure: one CI run on a fresh machine reports every failing
# target, not only the first. Prints each target's wall time and the total,
# so the budget (45 min on a loaded 2-core machine) is visible in the log;
# a target's output goes to build/ci/<target>.log and its tail is printed
# when it fails. Exits non-zero when any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."

# A target listed twice (two mk files name it) runs once, as make would.
targets=${CI_ONLY:-$(make -s --no-print-directory print-ci-targets | tr " " "\n" | awk "NF && !seen[\$0]++")}
mkdir -p build/ci
failed=()
total_start=$(date +%s)
for t in $targets; do
  start=$(date +%s)
  if make --no-print-directory "$t" >"build/ci/$t.log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed+=("$t")
  fi
  printf 'ci: %-24s %-6s %5ss  (load %s)\n' "$t" "$status" "$(( $(date +%s) - start ))" \
    "$(cut -d' ' -f1 /proc/loadavg)"
  if [ "$status" = FAILED ]; then
    tail -60 "build/ci/$t.log" | sed "s/^/  $t| /"
  fi
done
echo "ci: total $(( $(date +%s) - total_start ))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "ci: failed: ${failed[*]} (logs under build/ci/)"
  exit 1
fi
