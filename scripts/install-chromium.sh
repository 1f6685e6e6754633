#!/usr/bin/env bash
# Debian's Chromium for the browser tests (test/**/*.e2e.test.ts). playwright-core drives it and never downloads a browser of
# its own. Idempotent: does nothing when /usr/bin/chromium exists. Needs root and apt (Debian 12 "bookworm").
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  # The Debian launcher script may print a harmless shell warning about /dev/shm; only the version line is shown.
  echo "install-chromium: $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium present')"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-chromium: /usr/bin/chromium is missing and this needs root and apt-get: apt-get install chromium" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# No recommends (desktop services, GPU drivers); fonts explicitly, so that pages and screenshots render text.
apt-get install -y -qq --no-install-recommends chromium fonts-liberation fonts-dejavu-core >/dev/null
echo "install-chromium: $(/usr/bin/chromium --version 2>/dev/null)"
