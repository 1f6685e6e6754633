#!/usr/bin/env bash
# Installs schemathesis (the OpenAPI fuzzer used by scripts/fuzz-api.sh) into .tools/schemathesis (or
# $SCHEMATHESIS_VENV), from PyPI. Kept apart from the Temporal tools' venv so that neither install can break the
# other. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEMATHESIS_VERSION="${SCHEMATHESIS_VERSION:-4.32.5}"
venv="${SCHEMATHESIS_VENV:-.tools/schemathesis}"
if [ -x "$venv/bin/st" ] && "$venv/bin/pip" show schemathesis 2>/dev/null | grep -q "^Version: $SCHEMATHESIS_VERSION$"; then
  echo "schemathesis present in $venv/bin"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
echo "schemathesis installed in $venv/bin: $("$venv/bin/st" --version)"
