#!/usr/bin/env bash
# Fuzzes every operation of the OpenAPI document with schemathesis against a real server started as `npm start`
# starts it (built dist, embedded Postgres and Temporal dev server on ports of its own, demo data seeded), as a staff
# user. Checks: no 5xx; every status, content type, header and body as the document declares; data the document
# refuses is refused. Exits non-zero on a finding, or if the server logged an error. Loopback only; the server is
# stopped at the end. Usage: scripts/fuzz-api.sh [st run options] (`npm run test:schema` bounds the examples).
set -euo pipefail
cd "$(dirname "$0")/.."
export SCHEMATHESIS_VENV="${SCHEMATHESIS_VENV:-.tools/schemathesis}"
bash scripts/install-schemathesis.sh >/dev/null
npm run --silent tools >/dev/null
npm run --silent build

port="${FUZZ_PORT:-3197}"
data_dir="$(mktemp -d /tmp/fuzz-api-XXXXXX)"
chmod 755 "$data_dir"
export FUZZ_BASE_URL="http://127.0.0.1:$port"
export FUZZ_USERNAME=fuzz-staff
export FUZZ_PASSWORD="fuzz-$(head -c 12 /dev/urandom | base64 | tr -d '/+=')"

PORT="$port" HOST=127.0.0.1 EMBEDDED_POSTGRES_PORT="${FUZZ_PG_PORT:-55197}" TEMPORAL_DEV_SERVER_PORT="${FUZZ_TEMPORAL_PORT:-7297}" \
  TEMPORAL_UI_PORT="${FUZZ_TEMPORAL_UI_PORT:-8297}" DATA_DIR="$data_dir" ADMIN_USERNAME="$FUZZ_USERNAME" ADMIN_PASSWORD="$FUZZ_PASSWORD" \
  LOG_LEVEL=warn LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME=1000000 LOGIN_MAX_DELAY_SECONDS=0 \
  node dist/src/main.js all >"$data_dir/server.log" 2>&1 &
server=$!
stop() {
  kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$data_dir"
}
trap stop EXIT

for _ in $(seq 1 120); do
  curl -fsS "$FUZZ_BASE_URL/healthz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$data_dir/server.log"; exit 1; }
  sleep 1
done

# The failed-login limit per client address is lifted: the fuzzer sends thousands of wrong passwords from one
# address and would otherwise lock out its own staff token. The limit has its own tests (test/auth).
status=0
SCHEMATHESIS_HOOKS=staff_auth PYTHONPATH=scripts/fuzz "$SCHEMATHESIS_VENV/bin/st" run "$FUZZ_BASE_URL/api/openapi.json" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection \
  --workers 2 --request-timeout 30 --no-color "$@" || status=$?
if grep -q '"level":50\|"level":60' "$data_dir/server.log"; then
  echo "server logged errors:"; grep '"level":50\|"level":60' "$data_dir/server.log" | head -20
  exit 1
fi
exit $status
