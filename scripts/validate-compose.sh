#!/usr/bin/env bash
# Checks the production stack (docker-compose.yml, Dockerfile, deploy/) as far as possible without a Docker engine
# and without the internet:
#   1. test/deploy/compose.test.ts (also part of `npm test`): the compose-spec schema and the project's rules.
#   2. The shell scripts of deploy/: `sh -n`, and shellcheck where installed.
#   3. Where installed, the real tools: `docker compose config` (or the older `docker-compose config`) interpolates
#      and validates the file, once with placeholder secrets (must pass) and once without (must refuse);
#      `caddy validate` checks the load balancer's Caddyfile (Debian's caddy, or the one `npm run stack` built);
#      `amtool check-config` Alertmanager's configuration (the one `npm run stack` unpacked).
# Optional extras on Debian: apt-get install docker-compose caddy shellcheck
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== compose rules (jest)"
npx jest --silent test/deploy/compose.test.ts

echo "== deploy shell scripts"
for script in deploy/postgres/*.sh deploy/temporal/*.sh deploy/prometheus/*.sh; do
  sh -n "$script"
done
if command -v shellcheck >/dev/null; then
  shellcheck deploy/postgres/*.sh deploy/temporal/*.sh deploy/prometheus/*.sh scripts/validate-compose.sh
else
  echo "shellcheck not installed: syntax checked with sh -n only"
fi

compose=()
if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null; then
  compose=(docker-compose)
fi
if [ ${#compose[@]} -gt 0 ]; then
  echo "== ${compose[*]} config"
  placeholders=$(mktemp)
  trap 'rm -f "$placeholders"' EXIT
  for secret in POSTGRES_PASSWORD APP_DB_PASSWORD TEMPORAL_DB_PASSWORD JWT_SECRETS; do
    echo "$secret=placeholder-placeholder-placeholder-0123"
  done >"$placeholders"
  # Only the placeholder file: variables of this shell must not decide the outcome.
  env -i PATH="$PATH" HOME="$HOME" "${compose[@]}" --env-file "$placeholders" config --quiet
  if env -i PATH="$PATH" HOME="$HOME" "${compose[@]}" --env-file .env.example config --quiet 2>/dev/null; then
    echo "error: the stack starts with the empty secrets of .env.example" >&2
    exit 1
  fi
  echo "valid; refuses to start without its secrets"
else
  echo "no docker compose / docker-compose: skipped the real Compose check"
fi

# Debian's caddy, or the one `npm run stack` built at the version the Compose file pins.
caddy_bin=$(command -v caddy || ls .tools/caddy-*/bin/caddy 2>/dev/null | tail -n 1 || true)
if [ -n "$caddy_bin" ]; then
  echo "== caddy validate ($caddy_bin)"
  "$caddy_bin" validate --adapter caddyfile --config deploy/caddy/Caddyfile 2>&1 | tail -n 1
else
  echo "caddy not installed: skipped the Caddyfile check"
fi
amtool_bin=$(command -v amtool || ls .tools/alertmanager-*/bin/amtool 2>/dev/null | tail -n 1 || true)
if [ -n "$amtool_bin" ]; then
  echo "== amtool check-config ($amtool_bin)"
  checked=$("$amtool_bin" check-config deploy/alertmanager/alertmanager.yml)
  echo "${checked%%$'\n'*}"
else
  echo "amtool not unpacked: skipped the Alertmanager configuration check"
fi
echo "compose stack: all available checks passed"
