import type { AttemptOutcome, DeliveryStatus } from '../delivery-rules/delivery-status';
import type { PayloadVersion } from '../webhooks/payload-versions';
import type { EnvelopeEnvironment } from '../webhooks/envelope';
import type { WebhookEventType } from '../webhooks/event-types';
import type { StoredTraceContext } from '../tracing';

/*
 * The tables of the delivery aggregate, with their row types: webhook events (the outbox rows, with their delivery
 * status), their delivery attempts (recorded, and started without an outcome) and the numbers each event is about. Only the modules of this folder query them,
 * each for one job (test/architecture/sql-ownership.test.ts).
 */

export const EVENTS = 'webhook_events';
export const ATTEMPTS = 'webhook_delivery_attempts';
/** Attempts started whose outcome is not recorded: in progress, or interrupted (migration 022). */
export const ATTEMPT_STARTS = 'webhook_attempt_starts';
/** The donation, checkout and order numbers each event is about: what the admin finds it by (migration 014). */
export const REFERENCES = 'webhook_event_references';
/** Events per delivery status, per slot, kept by Postgres's triggers as events are written (migration 024). */
export const COUNTS = 'webhook_event_counts';
/** The endpoint's table (src/webhook-endpoint/), joined where an event is read with its endpoint. */
export const ENDPOINTS = 'webhook_endpoints';

/**
 * A row of webhook_events. Beside the payload, the facts its renderer gave are written with it (never read back from
 * the payload): the keys the admin searches it by (the numbers are in REFERENCES) and the envelope's environment.
 */
export interface WebhookEventRow {
  id: number;
  endpoint_id: number;
  event_type: WebhookEventType;
  payload_version: PayloadVersion;
  source_key: string;
  /** The envelope exactly as sent; normally JSON, but shown as text when it is not. Empty once dropped. */
  payload: string;
  /** The payment's transaction id; null for a sign-up (migration 014). */
  transaction_id: string | null;
  /** The donor's, subscriber's or customer's e-mail, trimmed and in lower case; cleared with the payload (migration 014). */
  donor_email: string | null;
  /**
   * The envelope's environment (migration 021). Null only where the payload never said (a payload dropped before
   * migration 021, or one that is not JSON): an event the previous release writes without it gets it from the
   * migration's insert trigger.
   */
  environment: EnvelopeEnvironment | null;
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
  /**
   * Set once the delivery workflow is started: by the relay, or, for a workflow it started eagerly, by that workflow's
   * first attempt, normally a moment later (or by a later pass of the relay, should no attempt begin within its claim);
   * null while the event waits in the outbox.
   */
  workflow_started_at: Date | null;
  /** The event's random key, carried in its workflows' memo (migration 017). */
  uuid: string;
  /** Its delivery workflow's id (set on insert; `webhook-event-<id>` for events started before migration 017). */
  workflow_id: string;
  /** The trace context of the platform call that wrote it (migration 023); null without tracing. */
  trace_context: StoredTraceContext | null;
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

/**
 * A row of webhook_attempt_starts: an attempt about to POST, written before the request leaves; the statement that
 * records the attempt's outcome deletes it. One that stays was interrupted (its worker lost), unless it is the newest
 * start of an attempt number still without an outcome: then it may still be under way.
 */
export interface AttemptStartRow {
  id: number;
  event_id: number;
  /** The attempt number of webhook_delivery_attempts it is an execution of; a retried execution repeats it. */
  number: number;
  manual: boolean;
  started_at: Date;
}
