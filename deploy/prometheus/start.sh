#!/bin/sh
# The prometheus service's entrypoint. Prometheus expands no variables in its configuration, so the application's
# /metrics token (METRICS_TOKEN) goes into the file that prometheus.yml names as credentials_file, readable by
# Prometheus' user alone; then Prometheus replaces this shell, with the service's command as its arguments.
set -eu
umask 077
printf '%s' "${METRICS_TOKEN:?METRICS_TOKEN is required: the bearer token of the application's /metrics}" > /prometheus/metrics_token
unset METRICS_TOKEN
exec /bin/prometheus "$@"
