import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The custom search attributes of delivery workflows, so that Temporal UI can list them by event type, status,
 * attempts and environment (`WebhookStatus = "max_retries_reached"`). A namespace must know them before a workflow
 * carries them: the embedded dev server registers them at start, the Compose job deploy/temporal/ensure-namespace.sh
 * when it creates the namespace, the tests on their test server.
 */
export const WEBHOOK_EVENT_TYPE = defineSearchAttributeKey('WebhookEventType', SearchAttributeType.KEYWORD);
/** Upserted on every transition: waiting, delivered, failed, max_retries_reached. */
export const WEBHOOK_STATUS = defineSearchAttributeKey('WebhookStatus', SearchAttributeType.KEYWORD);
/** Attempts made, scheduled and manual alike; upserted with the status. */
export const WEBHOOK_ATTEMPTS = defineSearchAttributeKey('WebhookAttempts', SearchAttributeType.INT);
/** The envelope's environment: prod, stage or test. */
export const WEBHOOK_ENVIRONMENT = defineSearchAttributeKey('WebhookEnvironment', SearchAttributeType.KEYWORD);

export const DELIVERY_SEARCH_ATTRIBUTES = [
  WEBHOOK_EVENT_TYPE,
  WEBHOOK_STATUS,
  WEBHOOK_ATTEMPTS,
  WEBHOOK_ENVIRONMENT,
] as const;
