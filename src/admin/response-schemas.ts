import { z } from 'zod';
import { DELIVERY_STATUSES } from '../delivery-rules/delivery-status';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { PAYLOAD_VERSIONS } from '../webhooks/payload-versions';

/* What the admin API answers, as documented in the OpenAPI document; the tests check answers against it. */

const utcTimestamp = z.string().meta({ description: 'UTC, ISO 8601 with Z', example: '2025-07-15T10:30:00Z' });

export const adminInfoSchema = z
  .strictObject({
    username: z.string(),
    temporal_ui_url: z.string().nullable(),
    temporal_namespace: z.string(),
    temporal_task_queue: z.string(),
    installation_id: z.uuid().meta({ description: "This database's installation: named by its workers and carried by its delivery workflows" }),
    statuses: z.array(z.strictObject({ value: z.enum(DELIVERY_STATUSES), label: z.string() })),
    stuck_after_minutes: z.number().int().meta({ description: 'DELIVERY_STUCK_AFTER_MINUTES: when an event that has not moved on counts as stuck' }),
    event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    payload_versions: z.array(z.strictObject({ value: z.enum(PAYLOAD_VERSIONS), selectable: z.boolean() })),
  })
  .meta({ id: 'AdminInfo' });

export const webhookEndpointSchema = z
  .strictObject({
    configured: z.boolean(),
    url: z.string().nullable(),
    active: z.boolean(),
    payload_version: z.enum(PAYLOAD_VERSIONS),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    basic_auth_username: z.string().nullable(),
    basic_auth_password_set: z.boolean().meta({ description: 'The password itself is write-only' }),
    signing_secret_set: z.boolean().meta({ description: 'The secret itself is write-only' }),
    created_at: utcTimestamp.nullable(),
    updated_at: utcTimestamp.nullable(),
  })
  .meta({ id: 'WebhookEndpoint' });

const eventFields = {
  id: z.number().int(),
  event: z.enum(WEBHOOK_EVENT_TYPES),
  created_at: utcTimestamp,
  status: z.enum(DELIVERY_STATUSES),
  status_label: z.string().meta({ description: 'The status in the admin page’s words (German)' }),
  attempts: z.number().int().meta({
    description: 'Attempts with a known outcome, scheduled and manual: the five scheduled attempts of the spec count among them',
  }),
  interrupted_attempts: z.number().int().meta({
    description:
      'Attempts whose worker was lost after they started and before their outcome was recorded: the subscriber may have received them. Not among `attempts`, and none of the five: Temporal made the same attempt again',
  }),
  last_response_code: z.number().int().nullable(),
  last_response_body: z.string().nullable(),
  next_attempt_at: utcTimestamp.nullable(),
  delivered_at: utcTimestamp.nullable(),
  test: z.boolean().meta({ description: 'A test event sent from the admin page (delivered with `webhook-test: 1`)' }),
  stuck: z.boolean().meta({
    description:
      'Waiting without an attempt (since its delivery started, or since it was created while not started), or failed with the next attempt overdue, for longer than DELIVERY_STUCK_AFTER_MINUTES: something keeps the delivery from moving on',
  }),
};

export const webhookEventPageSchema = z
  .strictObject({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(z.strictObject(eventFields).meta({ id: 'WebhookEventSummary' })),
  })
  .meta({ id: 'WebhookEventPage' });

export const webhookEventDetailSchema = z
  .object({
    ...eventFields,
    payload_version: z.enum(PAYLOAD_VERSIONS),
    workflow_id: z.string(),
    last_error: z.string().nullable(),
    payload: z.unknown().meta({
      description: 'The envelope exactly as it is sent: parsed JSON, or the stored text when it is not JSON; null once dropped',
    }),
    payload_is_json: z.boolean().meta({ description: 'Whether the stored payload is JSON (it is for every event this service rendered)' }),
    payload_dropped_at: utcTimestamp.nullable().meta({
      description: 'When retention dropped the payload and the response bodies (PAYLOAD_RETENTION_DAYS); null while kept',
    }),
    delivery_attempts: z.array(
      z.object({
        number: z.number().int().meta({ description: 'An interrupted attempt shares its number with the attempt that ran it again' }),
        manual: z.boolean(),
        started_at: utcTimestamp,
        duration_ms: z.number().int().nullable().meta({ description: 'Null while the outcome is not known' }),
        outcome: z.enum(['delivered', 'failed']).nullable().meta({ description: 'Null: not known (interrupted, or still under way)' }),
        interrupted: z.boolean().meta({
          description:
            'Interrupted, outcome unknown: the worker was lost after the attempt started and before its outcome was recorded; the subscriber may have received the request. False with a null outcome: under way',
        }),
        response_code: z.number().int().nullable(),
        response_body: z.string().nullable(),
        error: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'WebhookEventDetail' });

export const resendAcceptedSchema = z
  .strictObject({
    id: z.number().int(),
    workflow_id: z.string().meta({ description: 'The workflow that makes the attempt (Temporal UI)' }),
  })
  .meta({ id: 'ResendAccepted' });

export const recoveryPreviewSchema = z
  .strictObject({
    count: z.number().int().meta({ description: 'Events a recovery with this filter would resend now' }),
    by_status: z.strictObject({ failed: z.number().int(), max_retries_reached: z.number().int() }),
  })
  .meta({ id: 'RecoveryPreview' });

export const recoverySchema = z
  .strictObject({
    id: z.string().meta({ description: 'The idempotency key the recovery was requested with' }),
    workflow_id: z.string().meta({ description: 'The recovery workflow (Temporal UI)' }),
    status: z.enum(['running', 'completed', 'failed', 'cancelled', 'terminated', 'timed_out']),
    created_from: utcTimestamp,
    created_to: utcTimestamp,
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).meta({ description: 'Empty: every type' }),
    requested_by: z.string(),
    started_at: utcTimestamp,
    closed_at: utcTimestamp.nullable(),
    progress: z
      .strictObject({
        total: z.number().int().meta({ description: 'Events to resend when the recovery started' }),
        processed: z.number().int(),
        delivered: z.number().int().meta({ description: 'Resent and delivered' }),
        failed: z.number().int().meta({ description: 'Resent and failed again' }),
        skipped: z.number().int().meta({ description: 'No longer to resend when their turn came (delivered meanwhile)' }),
        unconfirmed: z.number().int().meta({ description: 'Resent, but no attempt was recorded within 2 minutes' }),
        done: z.boolean(),
      })
      .nullable()
      .meta({ description: 'Null when not known yet (just started) or when no worker answers' }),
  })
  .meta({ id: 'Recovery' });

export const testEventCreatedSchema = z
  .strictObject({
    id: z.number().int().meta({ description: 'The test event’s id (its envelope id), listed among the events' }),
    event: z.enum(WEBHOOK_EVENT_TYPES),
    payload_version: z.enum(PAYLOAD_VERSIONS),
    workflow_id: z.string().meta({ description: 'Its delivery workflow, started by the outbox relay moments later' }),
  })
  .meta({ id: 'TestEventCreated' });

export const deliveryHealthSchema = z
  .strictObject({
    window: z.enum(['24h', '7d']),
    from: utcTimestamp.meta({ description: 'Start of the first hour shown' }),
    to: utcTimestamp.meta({ description: 'Now: the last hour is the current one, so far' }),
    hours: z.array(
      z.strictObject({
        start: utcTimestamp,
        delivered: z.number().int().meta({ description: 'Attempts that delivered (2xx in time)' }),
        failed: z.number().int().meta({ description: 'Attempts that failed' }),
      }),
    ),
    attempts: z.number().int(),
    delivered: z.number().int(),
    failed: z.number().int(),
    success_rate: z.number().min(0).max(1).nullable().meta({ description: 'Delivered attempts / attempts; null without attempts' }),
    median_ms: z.number().int().nullable().meta({ description: 'Median attempt duration; null without attempts' }),
    p95_ms: z.number().int().nullable().meta({ description: '95th percentile of the attempt durations; null without attempts' }),
    last_success_at: utcTimestamp.nullable().meta({ description: 'When the last attempt that delivered started (ever)' }),
  })
  .meta({ id: 'DeliveryHealth' });
