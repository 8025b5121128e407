#!/usr/bin/env bash
# internal/wasm/cm links wasmtime's static library through cgo: it needs a C
# compiler and nothing else (the library comes with `go mod download`, see
# docs/wasm.md). Idempotent: installs gcc only when no C compiler is found.
set -euo pipefail

if ! command -v "${CC:-gcc}" >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null
fi
