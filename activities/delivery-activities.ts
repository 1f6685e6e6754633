import { performance } from 'node:perf_hooks';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../src/db/knex';
import type {
  AttemptReport,
  AttemptRequest,
  AttemptResult,
  DeliveryActivities,
  RecordedSchedule,
  RecordedState,
  RecordRequest,
} from '../src/delivery-rules/activity-contracts';
import { foreignWorkflowReason } from '../src/delivery-rules/event-identity';
import { RESPONSE_TIMEOUT_MS } from '../src/delivery-rules/retry-schedule';
import type { Logger } from '../src/logger';
import type { DeliveryMetrics } from '../src/observability/metrics';
import type { Keyring } from '../src/secrets/keyring';
import { SERVICE_NAME, SERVICE_VERSION } from '../src/service-info';
import { traceAttempt } from '../src/tracing';
import { classifyExchange, exchangeErrorType, type HttpExchange, RESPONSE_BODY_LIMIT_BYTES, withoutSecrets } from '../src/webhooks/delivery-outcome';
import { keySpellings, type RedactionNeedles, redactionNeedles } from '../src/webhooks/secret-redaction';
import { openEndpointSecrets } from '../src/webhook-endpoint/endpoint-store';
import {
  type DeliveryProgress,
  type EndpointForAttempt,
  type EventForAttempt,
  type RecordedAttempt,
  findRecordedProgress,
  recordAttempt as writeAttempt,
  startAttempt,
} from '../src/webhook-events/attempts';
import { readEventKey, readInstallation } from '../src/webhook-events/installation';
import { signatureHeaders, signingKey } from '../src/webhooks/signature';
import { type ResolveHost, systemResolver } from '../src/webhooks/subscriber-address';
import { postRequest } from './http-post';
import { SubscriberConnections } from './subscriber-connections';

export interface HttpSettings {
  /** The spec's 30 s in production; tests pass a scaled-down limit instead of waiting half a minute. */
  timeoutMs: number;
  userAgent: string;
}

export interface DeliveryActivityDependencies {
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
  /** Send the attempt's trace context (`traceparent`) to the subscriber while tracing is on (WEBHOOK_SEND_TRACEPARENT). */
  sendTraceparent?: boolean;
}

export const DEFAULT_HTTP_SETTINGS: HttpSettings = {
  timeoutMs: RESPONSE_TIMEOUT_MS,
  userAgent: `${SERVICE_NAME}/${SERVICE_VERSION} (webhook delivery)`,
};

const eventMissing = (eventId: number) =>
  ApplicationFailure.nonRetryable(`Webhook event ${eventId} does not exist`, 'WebhookEventNotFound');

/** An endpoint's credentials, as stored (sealed) or opened. */
type Credentials = Pick<EndpointForAttempt, 'basic_auth_username' | 'basic_auth_password' | 'signing_secret'>;

const basicCredentials = (credentials: Credentials) =>
  Buffer.from(`${credentials.basic_auth_username}:${credentials.basic_auth_password ?? ''}`, 'utf8').toString('base64');

/**
 * What must never come back out through a stored response: the password, the header made of it, the signing secret
 * and its key in the spellings tools print it (base64, what a subscriber configures without the `whsec_`; base64url;
 * hex).
 */
function secretsOf(credentials: Credentials): string[] {
  const { basic_auth_username: username, basic_auth_password: password, signing_secret: secret } = credentials;
  return [
    ...(username ? [basicCredentials(credentials)] : []),
    ...(password ? [password] : []),
    ...(secret ? [secret, ...keySpellings(signingKey(secret))] : []),
  ];
}

/** An endpoint's credentials opened: the Authorization header made of them, the signing secret, and what redaction looks for. */
interface OpenedCredentials {
  authorization: string | undefined;
  signingSecret: string | null;
  needles: RedactionNeedles;
}

interface CredentialsOpener {
  open(stored: Credentials): OpenedCredentials;
  /** Lets go of the credentials it keeps (the endpoint is switched off: no attempt needs them). */
  forget(): void;
}

const sameCredentials = (a: Credentials, b: Credentials) =>
  a.basic_auth_username === b.basic_auth_username && a.basic_auth_password === b.basic_auth_password && a.signing_secret === b.signing_secret;

/** Nothing was sent, so nothing of ours can come back. */
const NO_NEEDLES = redactionNeedles([]);

/**
 * Opens an endpoint's stored credentials, keeping the last ones opened for the next attempt while they are stored
 * unchanged: a platform has one endpoint, and opening its secrets and preparing their redaction at every attempt cost
 * more than the rest of the attempt's own code (BENCHMARKS.md, issue 29). Every save seals with a new nonce, so new
 * credentials, or the same sealed again with another key, are opened anew; the ones kept before are let go first,
 * whether the new ones open or not, and ones that do not open throw every time.
 */
function credentialsOpener(keyring: Keyring): CredentialsOpener {
  let last: { stored: Credentials; opened: OpenedCredentials } | undefined;
  return {
    open(stored) {
      if (last && sameCredentials(last.stored, stored)) return last.opened;
      last = undefined;
      const credentials = openEndpointSecrets(stored, keyring);
      const opened = {
        authorization: credentials.basic_auth_username ? `Basic ${basicCredentials(credentials)}` : undefined,
        signingSecret: credentials.signing_secret,
        needles: redactionNeedles(secretsOf(credentials)),
      };
      const { basic_auth_username, basic_auth_password, signing_secret } = stored;
      last = { stored: { basic_auth_username, basic_auth_password, signing_secret }, opened };
      return opened;
    },
    forget() {
      last = undefined;
    },
  };
}

function requestHeaders(eventId: number, payload: string, opened: OpenedCredentials, http: HttpSettings, now: Date, test: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': http.userAgent };
  // A test event sent from the admin page (docs/webhooks.md#test-events); real events never carry it.
  if (test) headers['webhook-test'] = '1';
  if (opened.authorization) headers.authorization = opened.authorization;
  if (opened.signingSecret) {
    Object.assign(
      headers,
      signatureHeaders({
        messageId: String(eventId),
        timestampSeconds: Math.floor(now.getTime() / 1000),
        body: payload,
        secret: opened.signingSecret,
      }),
    );
  }
  return headers;
}

type NotSent = Extract<HttpExchange, { kind: 'not-sent' }>;

/** A request ready to be POSTed: the endpoint's credentials opened, and the headers made with them. */
interface ReadyRequest {
  kind: 'ready';
  opened: OpenedCredentials;
  headers: Record<string, string>;
}

/**
 * The request of an attempt, or why nothing can be sent. Everything here is pure (no I/O), so an error here (a secret
 * sealed with a key no longer in SECRETS_KEYS, a stored secret that cannot sign) would come back on every retry: it
 * ends the attempt as failed with its reason, recorded and shown, so that the schedule and max retries apply. A retry
 * by Temporal is only for errors that can pass by themselves (Postgres or the network down).
 */
function prepareRequest(
  eventId: number,
  event: EventForAttempt,
  credentials: CredentialsOpener,
  http: HttpSettings,
  now: Date,
): ReadyRequest | NotSent {
  if (!event.endpoint.active) {
    credentials.forget();
    return { kind: 'not-sent', reason: 'the webhook endpoint is switched off' };
  }
  try {
    const opened = credentials.open(event.endpoint);
    return { kind: 'ready', opened, headers: requestHeaders(eventId, event.payload, opened, http, now, event.test) };
  } catch (err) {
    // The keyring's and the signer's messages name a column, a key id or the cure, never a secret's value.
    return { kind: 'not-sent', reason: (err as Error).message };
  }
}

/** What every log line of an activity carries: which event, which workflow, which attempt. */
function logContext(eventId: number, attemptNumber: number) {
  const { workflowExecution, attempt } = Context.current().info;
  // activityAttempt > 1: Temporal retried this activity after an infrastructure error, not a new delivery attempt.
  return { eventId, workflowId: workflowExecution?.workflowId, attempt: attemptNumber, activityAttempt: attempt };
}

/**
 * The delivery activities, built from their dependencies. They own all I/O (Postgres, HTTP); the workflow owns
 * the schedule. Credentials and payloads are read here from Postgres and never pass through workflow history.
 */
export function createDeliveryActivities({
  db,
  log,
  http: httpOverrides,
  clock = () => new Date(),
  metrics,
  allowPrivateAddresses,
  resolve = systemResolver,
  keyring,
  sendTraceparent = false,
}: DeliveryActivityDependencies): DeliveryActivities {
  const http: HttpSettings = { ...DEFAULT_HTTP_SETTINGS, ...httpOverrides };
  const addresses = { resolve, allowPrivateAddresses };
  const connections = new SubscriberConnections();
  const credentials = credentialsOpener(keyring);

  const stateOf = ({ status, nextAttemptAt }: DeliveryProgress): RecordedState => {
    const nextAttemptAtMs = nextAttemptAt?.getTime() ?? null;
    return { status, nextAttemptAtMs, retryInMs: nextAttemptAtMs === null ? null : Math.max(0, nextAttemptAtMs - clock().getTime()) };
  };

  /**
   * Sends and records nothing for a workflow that is not this event's: another installation's (a database sharing the
   * namespace and task queue) or another event's of the same id. Retryable, so that the workflow is never ended here:
   * it waits, retried with backoff, for its own installation's worker (docs/delivery.md); an error log and
   * webhook_foreign_delivery_workflows_total (alert WebhookForeignDeliveryWorkflows) say so meanwhile.
   */
  async function refuseForeignWorkflow({ eventId, owner }: AttemptRequest, eventKey: string | undefined): Promise<void> {
    if (!owner) return;
    const installation = await readInstallation(db);
    const reason = foreignWorkflowReason(owner, { installation, eventKey });
    if (reason === undefined) return;
    metrics?.foreignDeliveryWorkflow();
    const { workflowExecution } = Context.current().info;
    const message =
      `Workflow ${workflowExecution?.workflowId} is not event ${eventId}'s of this database: ${reason}; nothing sent or recorded. ` +
      'Another deployment shares this task queue (TEMPORAL_TASK_QUEUE)';
    log.error({ eventId, workflowId: workflowExecution?.workflowId, owner, installation }, message);
    throw ApplicationFailure.retryable(message, 'ForeignDeliveryWorkflow');
  }

  /** Records an attempt and its status transition; an attempt recorded before answers the event as it stands. */
  async function record(request: RecordRequest, responseBody: string | null): Promise<RecordedAttempt> {
    const recorded = await writeAttempt(db, { ...request, responseBody });
    if (!recorded) throw eventMissing(request.eventId);
    if (!recorded.written) log.debug({ ...logContext(request.eventId, request.attemptNumber), status: recorded.status }, 'webhook delivery attempt was recorded already');
    return recorded;
  }

  /** The status fields of the log line that follows a record. */
  const recordedFields = ({ status, nextAttemptAt }: DeliveryProgress) => ({ status, nextAttemptAt: nextAttemptAt?.toISOString() ?? null });

  /**
   * One delivery attempt: records its start, POSTs the stored payload once and records the outcome with the event's
   * new status. Throws only for infrastructure errors before the POST (retried by Temporal; nothing was sent); a request that
   * cannot be made (prepareRequest) is a failed attempt like any other. Never throws after the POST: when the write
   * fails, the outcome goes back unrecorded and the workflow records it with recordAttempt, so the subscriber never
   * gets this attempt twice because of the database.
   */
  async function attemptDelivery(request: AttemptRequest): Promise<AttemptReport> {
    const { eventId, attemptNumber, attempt } = request;
    const logFields = { ...logContext(eventId, attemptNumber), manual: attempt.kind === 'manual' };
    // Another installation's workflow is refused before anything is written; another event's (its key) by the
    // statement, which then writes no start, and here, before the event's absence is told: such a workflow waits
    // for its own worker.
    await refuseForeignWorkflow(request, undefined);
    const startedAt = clock();
    const started = performance.now();
    const event = await startAttempt(db, { eventId, attemptNumber, manual: attempt.kind === 'manual', startedAt, eventKey: request.owner?.key ?? null });
    await refuseForeignWorkflow(request, event?.key);
    if (!event) throw eventMissing(eventId);
    // An attempt recorded already (a worker lost before Temporal heard of it, a reset workflow) is not sent again.
    if (event.recorded) {
      log.warn({ ...logFields, outcome: event.recorded.outcome }, 'webhook delivery attempt already recorded; not sent again');
      const { status, nextAttemptAt, ...result } = event.recorded;
      return { ...result, recorded: stateOf({ status, nextAttemptAt }) };
    }

    const prepared = prepareRequest(eventId, event, credentials, http, startedAt);
    const exchange =
      prepared.kind === 'ready'
        ? await traceAttempt(event.endpoint.url, { eventId, attempt: attemptNumber }, async (span) => {
            const headers = sendTraceparent ? { ...prepared.headers, ...span.propagationHeaders() } : prepared.headers;
            const sent = await postRequest(event.endpoint.url, headers, Buffer.from(event.payload, 'utf8'), {
              timeoutMs: http.timeoutMs,
              maxBodyBytes: RESPONSE_BODY_LIMIT_BYTES,
              addresses,
              connections,
            });
            span.end({ statusCode: sent.kind === 'response' ? sent.status : undefined, errorType: exchangeErrorType(sent) });
            return sent;
          })
        : prepared;
    const needles = prepared.kind === 'ready' ? prepared.opened.needles : NO_NEEDLES;
    const bodyCut = exchange.kind === 'response' && !exchange.complete;
    const { responseBody, ...outcome } = withoutSecrets(classifyExchange(exchange), needles, { bodyCut });
    const result: AttemptResult = { ...outcome, startedAtMs: startedAt.getTime(), durationMs: Math.round(performance.now() - started) };
    metrics?.deliveryAttempt({ event: event.eventType, outcome: result.outcome, durationMs: result.durationMs });
    const attemptFields = {
      ...logFields,
      eventType: event.eventType,
      outcome: result.outcome,
      responseCode: result.responseCode,
      durationMs: result.durationMs,
      error: result.error,
    };
    let recorded: RecordedAttempt;
    try {
      recorded = await record({ ...request, attempt: { ...attempt, outcome: result.outcome }, result }, responseBody);
    } catch (err) {
      // The subscriber has it: never send again. The workflow records the outcome with recordAttempt, retried until
      // Postgres is back; the response body is not kept (it never enters workflow history).
      log.warn({ ...attemptFields, err }, 'webhook delivery attempt not recorded at once; the workflow records it next');
      return { ...result, recorded: null };
    }
    // One line per attempt, once its outcome and the event's new status are committed: a line a delivery costs.
    log.info({ ...attemptFields, ...recordedFields(recorded) }, 'webhook delivery attempt');
    return { ...result, recorded: stateOf(recorded) };
  }

  /**
   * Records an attempt whose outcome attemptDelivery could not write (Postgres failed right after the POST).
   * Idempotent per (event, attempt): when Temporal retries it after a commit it did not hear about, nothing is
   * written twice.
   */
  async function recordAttempt(request: RecordRequest): Promise<RecordedState> {
    await refuseForeignWorkflow(request, request.owner && (await readEventKey(db, request.eventId)));
    const recorded = await record(request, null);
    if (recorded.written) {
      log.info({ ...logContext(request.eventId, request.attemptNumber), outcome: request.result.outcome, ...recordedFields(recorded) }, 'webhook event status recorded');
    }
    return stateOf(recorded);
  }

  /** Where an event's delivery stands, for a resend after its delivery workflow ended or a delivery resumed. */
  async function readRecordedProgress(eventId: number): Promise<RecordedSchedule> {
    const progress = await findRecordedProgress(db, eventId);
    if (!progress) throw eventMissing(eventId);
    const { status, attempts, lastManualAttempt, scheduledAttempts } = progress;
    return { status, attempts, lastManualAttempt, scheduledAttempts, retryInMs: stateOf(progress).retryInMs };
  }

  return { attemptDelivery, recordAttempt, readRecordedProgress };
}

