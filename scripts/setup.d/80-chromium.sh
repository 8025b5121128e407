#!/usr/bin/env bash
# Headless Chromium for the trace page's screenshot check
# (make test-trace-html): Debian bookworm's chromium, pinned. Debian's
# security archive keeps only chromium's newest build, so a pin the archive
# has since replaced would fail every fresh machine's setup: then the
# archive's current build is installed and named, and the check (pixels of
# a rendered page, not a browser's quirks) runs on it.
set -euo pipefail

want=156.0.8078.114-1~deb12u1
have=$(dpkg-query -W -f='${Version}' chromium 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  apt-get update -qq
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "chromium=$want" >/dev/null 2>&1; then
    echo "setup: chromium $want is no longer in the archive; installing its current build" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    echo "setup: chromium $(dpkg-query -W -f='${Version}' chromium)" >&2
  fi
fi
