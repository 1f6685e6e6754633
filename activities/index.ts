import { performance } from 'node:perf_hooks';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../src/db/knex';
import type { Logger } from '../src/logger';
import type { DeliveryMetrics } from '../src/observability/metrics';
import { SERVICE_NAME, SERVICE_VERSION } from '../src/service-info';
import { classifyExchange, type DeliveryOutcome, RESPONSE_BODY_LIMIT_BYTES, withoutSecrets } from '../src/webhooks/delivery-outcome';
import { type AttemptKind, type DeliveryStatus, type FinishedAttempt, statusAfterAttempt } from '../src/webhooks/delivery-status';
import { RESPONSE_TIMEOUT_MS } from '../src/webhooks/retry-schedule';
import type { Keyring } from '../src/secrets/keyring';
import { openEndpointSecrets } from '../src/webhooks/endpoint-store';
import { signatureHeaders } from '../src/webhooks/signature';
import { type ResolveHost, systemResolver } from '../src/webhooks/subscriber-address';
import { postRequest } from './http-post';

export interface HttpSettings {
  /** The spec's 30 s in production; tests pass a scaled-down limit instead of waiting half a minute. */
  timeoutMs: number;
  userAgent: string;
}

export interface ActivityDependencies {
  db: Db;
  log: Logger;
  http?: Partial<HttpSettings>;
  /** Wall time for attempt timestamps and the signature timestamp. */
  clock?: () => Date;
  /**
   * Whether subscribers on loopback, private or link-local addresses may be reached (development only; see
   * urlPolicyFor). Checked at every attempt on the addresses the host resolves to, not only at configuration.
   */
  allowPrivateAddresses: boolean;
  /** DNS; tests inject a table. */
  resolve?: ResolveHost;
  /** Counts attempts and their durations; the worker process passes its registry. */
  metrics?: DeliveryMetrics;
  /** Opens the endpoint's secrets (SECRETS_KEYS). */
  keyring: Keyring;
}

export const DEFAULT_HTTP_SETTINGS: HttpSettings = {
  timeoutMs: RESPONSE_TIMEOUT_MS,
  userAgent: `${SERVICE_NAME}/${SERVICE_VERSION} (webhook delivery)`,
};

export interface AttemptRequest {
  eventId: number;
  /** Row number in webhook_delivery_attempts: 1, 2, … over scheduled and manual attempts alike. */
  attemptNumber: number;
  manual: boolean;
  /**
   * Which attempt the workflow makes (agreeing with `manual`). When given, a delivery is recorded right here, so
   * that the common case takes one activity instead of two; failures are left to recordAttempt with the retry time.
   */
  attempt?: AttemptKind;
}

/** What one attempt produced; a failed delivery is a normal result, not an exception. */
export interface AttemptResult extends DeliveryOutcome {
  startedAtMs: number;
  durationMs: number;
  /** The event's status after this attempt when attemptDelivery recorded it itself; otherwise recordAttempt must. */
  recordedStatus?: DeliveryStatus;
}

export interface RecordRequest {
  eventId: number;
  attemptNumber: number;
  attempt: FinishedAttempt;
  result: AttemptResult;
  /** When the next scheduled attempt will be made, if one is still due. */
  nextAttemptAtMs: number | null;
}

interface EventWithEndpoint {
  id: number;
  event_type: string;
  payload: string;
  active: boolean;
  url: string;
  basic_auth_username: string | null;
  basic_auth_password: string | null;
  signing_secret: string | null;
}

interface AttemptRow {
  started_at: Date;
  duration_ms: number;
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  outcome: 'delivered' | 'failed';
}

const eventMissing = (eventId: number) =>
  ApplicationFailure.nonRetryable(`Webhook event ${eventId} does not exist`, 'WebhookEventNotFound');

const basicCredentials = (event: EventWithEndpoint) =>
  Buffer.from(`${event.basic_auth_username}:${event.basic_auth_password ?? ''}`, 'utf8').toString('base64');

/** What must never come back out through a stored response: the password, the header made of it, the secret. */
function secretsOf(event: EventWithEndpoint): string[] {
  const secrets = [event.basic_auth_password, event.signing_secret].filter((secret): secret is string => Boolean(secret));
  if (event.basic_auth_username) secrets.unshift(basicCredentials(event));
  return secrets;
}

function requestHeaders(event: EventWithEndpoint, http: HttpSettings, now: Date): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': http.userAgent };
  if (event.basic_auth_username) headers.authorization = `Basic ${basicCredentials(event)}`;
  if (event.signing_secret) {
    Object.assign(
      headers,
      signatureHeaders({
        messageId: String(event.id),
        timestampSeconds: Math.floor(now.getTime() / 1000),
        body: event.payload,
        secret: event.signing_secret,
      }),
    );
  }
  return headers;
}

/** What every log line of an activity carries: which event, which workflow, which attempt. */
function logContext(eventId: number, attemptNumber: number) {
  const { workflowExecution, attempt } = Context.current().info;
  // activityAttempt > 1: Temporal retried this activity after an infrastructure error, not a new delivery attempt.
  return { eventId, workflowId: workflowExecution?.workflowId, attempt: attemptNumber, activityAttempt: attempt };
}

const resultFromRow = (row: AttemptRow): AttemptResult => ({
  outcome: row.outcome,
  responseCode: row.response_code,
  responseBody: row.response_body,
  error: row.error,
  startedAtMs: row.started_at.getTime(),
  durationMs: row.duration_ms,
});

/**
 * The delivery activities, built from their dependencies. They own all I/O (Postgres, HTTP); the workflow owns
 * the schedule. Credentials and payloads are read here from Postgres and never pass through workflow history.
 */
export function createActivities({
  db,
  log,
  http: httpOverrides,
  clock = () => new Date(),
  metrics,
  allowPrivateAddresses,
  resolve = systemResolver,
  keyring,
}: ActivityDependencies) {
  const http: HttpSettings = { ...DEFAULT_HTTP_SETTINGS, ...httpOverrides };
  const addresses = { resolve, allowPrivateAddresses };

  /** POSTs the stored payload once and reports the outcome. Throws only for infrastructure errors (retried). */
  async function attemptDelivery({ eventId, attemptNumber, manual, attempt }: AttemptRequest): Promise<AttemptResult> {
    const logFields = { ...logContext(eventId, attemptNumber), manual };
    // An attempt recorded already (workflow reset, replayed resend) is reported as it was, never sent again.
    const recorded: AttemptRow | undefined = await db('webhook_delivery_attempts')
      .where({ event_id: eventId, number: attemptNumber })
      .first();
    if (recorded) {
      log.warn({ ...logFields, outcome: recorded.outcome }, 'webhook delivery attempt already recorded; not sent again');
      return resultFromRow(recorded);
    }
    const stored: EventWithEndpoint | undefined = await db('webhook_events as e')
      .join('webhook_endpoints as p', 'p.id', 'e.endpoint_id')
      .where('e.id', eventId)
      .first(
        'e.id',
        'e.event_type',
        'e.payload',
        'p.active',
        'p.url',
        'p.basic_auth_username',
        'p.basic_auth_password',
        'p.signing_secret',
      );
    if (!stored) throw eventMissing(eventId);
    // A key missing from SECRETS_KEYS throws here: retried by Temporal like any infrastructure error, no attempt used.
    const event = openEndpointSecrets(stored, keyring);

    const startedAt = clock();
    const started = performance.now();
    const exchange = event.active
      ? await postRequest(event.url, requestHeaders(event, http, startedAt), Buffer.from(event.payload, 'utf8'), {
          timeoutMs: http.timeoutMs,
          maxBodyBytes: RESPONSE_BODY_LIMIT_BYTES,
          addresses,
        })
      : ({ kind: 'not-sent', reason: 'the webhook endpoint is switched off' } as const);
    const result: AttemptResult = {
      ...withoutSecrets(classifyExchange(exchange), secretsOf(event)),
      startedAtMs: startedAt.getTime(),
      durationMs: Math.round(performance.now() - started),
    };
    metrics?.deliveryAttempt({ event: event.event_type, outcome: result.outcome, durationMs: result.durationMs });
    log.info(
      {
        ...logFields,
        eventType: event.event_type,
        outcome: result.outcome,
        responseCode: result.responseCode,
        durationMs: result.durationMs,
        error: result.error,
      },
      'webhook delivery attempt',
    );
    if (attempt && result.outcome === 'delivered') {
      const finished: FinishedAttempt = { ...attempt, outcome: 'delivered' };
      try {
        const recordedStatus = await recordAttempt({ eventId, attemptNumber, attempt: finished, result, nextAttemptAtMs: null });
        return { ...result, recordedStatus };
      } catch (err) {
        // The subscriber has it: never send again. The workflow records it with recordAttempt, retried until it passes.
        log.warn({ ...logFields, err }, 'webhook delivery not recorded at once; the workflow records it next');
      }
    }
    return result;
  }

  /**
   * Writes the attempt row and the event's status transition in one transaction. Idempotent per (event, attempt):
   * when Temporal retries this activity after a commit it did not hear about, nothing is written twice.
   */
  async function recordAttempt({ eventId, attemptNumber, attempt, result, nextAttemptAtMs }: RecordRequest): Promise<DeliveryStatus> {
    const logFields = logContext(eventId, attemptNumber);
    const { status, written } = await db.transaction(async (trx) => {
      const event: { status: DeliveryStatus } | undefined = await trx('webhook_events')
        .where({ id: eventId })
        .forUpdate()
        .first('status');
      if (!event) throw eventMissing(eventId);
      const inserted = await trx('webhook_delivery_attempts')
        .insert({
          event_id: eventId,
          number: attemptNumber,
          manual: attempt.kind === 'manual',
          started_at: new Date(result.startedAtMs),
          duration_ms: result.durationMs,
          response_code: result.responseCode,
          response_body: result.responseBody,
          error: result.error,
          outcome: result.outcome,
        })
        .onConflict(['event_id', 'number'])
        .ignore()
        .returning('id');
      if (inserted.length === 0) return { status: event.status, written: false };

      const status = statusAfterAttempt(event.status, attempt);
      await trx('webhook_events')
        .where({ id: eventId })
        .update({
          status,
          attempts: trx.raw('attempts + 1'),
          last_response_code: result.responseCode,
          last_response_body: result.responseBody,
          last_error: result.error,
          next_attempt_at: status === 'failed' && nextAttemptAtMs !== null ? new Date(nextAttemptAtMs) : null,
          delivered_at:
            result.outcome === 'delivered' ? new Date(result.startedAtMs + result.durationMs) : trx.raw('delivered_at'),
          updated_at: trx.fn.now(),
        });
      return { status, written: true };
    });
    const nextAttemptAt = nextAttemptAtMs === null ? null : new Date(nextAttemptAtMs).toISOString();
    if (written) log.info({ ...logFields, outcome: result.outcome, status, nextAttemptAt }, 'webhook event status recorded');
    else log.debug({ ...logFields, status }, 'webhook delivery attempt was recorded already');
    return status;
  }

  return { attemptDelivery, recordAttempt };
}

export type DeliveryActivities = ReturnType<typeof createActivities>;
