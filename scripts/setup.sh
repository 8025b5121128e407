#!/usr/bin/env bash
# Installs what a fresh machine lacks for building and testing mur. Safe to
# run again; each step skips itself when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
for f in scripts/setup.d/*.sh; do
  [ -e "$f" ] || continue
  echo "setup: $f"
  bash "$f"
done
go mod download
