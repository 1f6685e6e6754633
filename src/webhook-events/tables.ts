import type { AttemptOutcome, DeliveryStatus } from '../delivery-rules/delivery-status';
import type { PayloadVersion } from '../webhooks/payload-versions';
import type { EventSearchKeys } from '../webhooks/event-search-keys';
import type { WebhookEventType } from '../webhooks/event-types';

/*
 * The tables of the delivery aggregate, with their row types: webhook events (the outbox rows, with their delivery
 * status), their delivery attempts and the numbers each event is about. Only the modules of this folder query them,
 * each for one job (test/architecture/sql-ownership.test.ts).
 */

export const EVENTS = 'webhook_events';
export const ATTEMPTS = 'webhook_delivery_attempts';
/** The donation, checkout and order numbers each event is about: what the admin finds it by (migration 014). */
export const REFERENCES = 'webhook_event_references';
/** The endpoint's table (src/webhook-endpoint/), joined where an event is read with its endpoint. */
export const ENDPOINTS = 'webhook_endpoints';

/** A row of webhook_events, with the keys the admin searches it by (written with the event). */
export interface WebhookEventRow extends Omit<EventSearchKeys, 'references'> {
  id: number;
  endpoint_id: number;
  event_type: WebhookEventType;
  payload_version: PayloadVersion;
  source_key: string;
  /** The envelope exactly as sent; normally JSON, but shown as text when it is not. Empty once dropped. */
  payload: string;
  /** A test event sent from the admin page (sent with `webhook-test: 1`). */
  test: boolean;
  /** When retention dropped the payload and the response bodies; null while they are kept. */
  payload_dropped_at: Date | null;
  status: DeliveryStatus;
  /** Attempts made, scheduled and manual alike. */
  attempts: number;
  last_response_code: number | null;
  last_response_body: string | null;
  last_error: string | null;
  /** While `failed` with a scheduled attempt still due: when it is due. */
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  /** Set by the relay once the delivery workflow is started; null while the event waits in the outbox. */
  workflow_started_at: Date | null;
  /** The event's random key, carried in its workflows' memo (migration 017). */
  uuid: string;
  /** Its delivery workflow's id (set on insert; `webhook-event-<id>` for events started before migration 017). */
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
}

/** A row of webhook_delivery_attempts: one HTTP POST (or one refusal to send) and what came of it. */
export interface DeliveryAttemptRow {
  id: number;
  event_id: number;
  /** 1, 2, … over scheduled and manual attempts alike; unique per event, which makes recording idempotent. */
  number: number;
  manual: boolean;
  started_at: Date;
  duration_ms: number;
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  outcome: AttemptOutcome;
}
