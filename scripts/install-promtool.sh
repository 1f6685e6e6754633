#!/usr/bin/env bash
# Prometheus' promtool for the alert rule tests (test/deploy/alert-rules.test.ts): `promtool check rules` and
# `promtool test rules`. Taken out of Debian's prometheus package without installing it, so that no Prometheus server
# is set up or started. Idempotent: does nothing when promtool is on the PATH. Needs root and apt (Debian 12).
set -euo pipefail

if command -v promtool >/dev/null; then
  echo "install-promtool: $(promtool --version 2>&1 | head -n 1)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-promtool: promtool is missing and this needs root and apt-get (or: apt-get install prometheus)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# apt downloads as the user _apt where it can; the folder is ours alone either way.
chmod 755 "$work"
apt-get update -qq
(cd "$work" && apt-get download -qq prometheus 2>/dev/null)
dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
install -m 0755 "$work/root/usr/bin/promtool" /usr/local/bin/promtool
echo "install-promtool: $(promtool --version 2>&1 | head -n 1)"
