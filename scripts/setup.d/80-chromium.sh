#!/usr/bin/env bash
# Headless Chromium for the trace page's screenshot check
# (make test-trace-html): Debian bookworm's chromium, pinned.
set -euo pipefail

want=156.0.8078.114-1~deb12u1
have=$(dpkg-query -W -f='${Version}' chromium 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "chromium=$want" >/dev/null
fi
