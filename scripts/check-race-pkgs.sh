#!/usr/bin/env bash
# Every package that starts goroutines (in its code or its tests) must be
# run under the race detector by some CI target. Arguments are the package
# patterns those targets cover (./dir or ./dir/...); a package that starts
# a goroutine and matches none fails the check, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."

covered() {
  local dir=$1 p
  for p in "${patterns[@]}"; do
    p=${p#./}
    case $p in
      */...) [[ $dir == "${p%/...}" || $dir == "${p%/...}"/* ]] && return 0 ;;
      *) [[ $dir == "${p%/}" ]] && return 0 ;;
    esac
  done
  return 1
}

patterns=("$@")
# A go statement: "go" then a call or a func literal, outside a comment.
dirs=$(git ls-files '*.go' |
  xargs grep -H -E '(^|[;{[:space:]])go (func[[:space:](]|[A-Za-z_][A-Za-z0-9_.]*\()' |
  grep -v -E '^[^:]*:[[:space:]]*//' | cut -d: -f1 | xargs -n1 dirname | sort -u)
missing=()
for d in $dirs; do
  covered "$d" || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "these packages start goroutines but no CI target runs them under -race; add them to RACE_PKGS in mk/race.mk:" >&2
  printf '  ./%s\n' "${missing[@]}" >&2
  exit 1
fi
echo "race coverage ok: $(wc -w <<<"$dirs") packages start goroutines"
