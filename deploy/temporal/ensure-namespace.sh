#!/bin/sh
# One-off job (temporalio/admin-tools image): creates the application's namespace, or sets its retention when it
# exists, so that TEMPORAL_NAMESPACE_RETENTION in .env stays the one place that decides it, and registers the
# delivery workflows' search attributes. The temporal CLI reads
# the server address from TEMPORAL_ADDRESS. Exits only once the namespace answers queries, so that workers started
# after this job do not poll a namespace the frontend has not loaded yet.
set -eu
namespace=${TEMPORAL_NAMESPACE:-default}
retention=${TEMPORAL_NAMESPACE_RETENTION:-168h}

wait_for() {
  description=$1
  shift
  attempt=0
  until "$@" >/dev/null 2>&1; do
    attempt=$((attempt + 1))
    if [ "$attempt" -ge 60 ]; then
      echo "Gave up after 120 s waiting for $description" >&2
      exit 1
    fi
    sleep 2
  done
}

cluster_serving() {
  # -w: NOT_SERVING contains SERVING, but not as a whole word.
  temporal operator cluster health | grep -qw SERVING
}

wait_for "Temporal at $TEMPORAL_ADDRESS to serve" cluster_serving

if temporal operator namespace describe --namespace "$namespace" >/dev/null 2>&1; then
  temporal operator namespace update --namespace "$namespace" --retention "$retention"
  echo "Namespace $namespace: retention set to $retention"
else
  temporal operator namespace create --namespace "$namespace" --retention "$retention" \
    --description "Webhook delivery workflows"
  echo "Namespace $namespace created with retention $retention"
fi

wait_for "namespace $namespace to answer queries" temporal workflow list --namespace "$namespace" --limit 1

# The search attributes delivery workflows carry (src/delivery-rules/search-attributes.ts), so that Temporal UI lists
# deliveries by them (WebhookStatus = "max_retries_reached"). Workflows that carry one the namespace does not know
# cannot start. Creating one that exists with the same type changes nothing. After the namespace answers: a namespace
# created a moment ago is not found yet.
temporal operator search-attribute create --namespace "$namespace" \
  --name WebhookEventType --type Keyword \
  --name WebhookStatus --type Keyword \
  --name WebhookAttempts --type Int \
  --name WebhookEnvironment --type Keyword
echo "Namespace $namespace: search attributes WebhookEventType, WebhookStatus, WebhookAttempts, WebhookEnvironment"
