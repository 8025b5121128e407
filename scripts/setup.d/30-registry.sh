#!/usr/bin/env bash
# The artifact suite's real OCI registry: Debian's docker-registry (the
# CNCF distribution registry), started on loopback by the test harness,
# and htpasswd (apache2-utils) to make its auth file. Idempotent.
set -euo pipefail
if command -v docker-registry >/dev/null && command -v htpasswd >/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# One apt-get update per machine: skip it when the lists are already there.
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial || true)" ]; then
  apt-get update -q
fi
if ! apt-get install -y -q --no-install-recommends docker-registry apache2-utils; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends docker-registry apache2-utils
fi
# The package's service is not wanted: tests start their own instances.
if command -v service >/dev/null; then service docker-registry stop >/dev/null 2>&1 || true; fi
