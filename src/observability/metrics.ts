import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { RequestObserver } from '../http/request-metrics';
import { withTimeLimit } from '../shared/time-limit';
import { type AttemptOutcome, DELIVERY_STATUSES, type DeliveryStatus } from '../delivery-rules/delivery-status';
import { stuckCutoff } from '../delivery-rules/stuck-events';
import { isEndpointFailing } from '../delivery-rules/endpoint-failing';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { countEventsByStatus, countStuckEvents, countUnstartedEvents, oldestUnstartedEventAgeSeconds } from '../webhook-events/gauge-counts';
import { readFailingStreak } from '../webhook-events/failing-streak';

/** One delivery attempt as the activity saw it; `event` is the event type (donation.completed, …). */
export interface DeliveryAttemptObservation {
  event: string;
  outcome: AttemptOutcome;
  durationMs: number;
}

/** The part the delivery activities use; injected into them, so that tests can pass a registry of their own. */
export interface DeliveryMetrics {
  deliveryAttempt(observation: DeliveryAttemptObservation): void;
  /** An attempt refused because its workflow is another installation's or another event's (docs/delivery.md). */
  foreignDeliveryWorkflow(): void;
}

/** What the retention purge's activities count. */
export interface RetentionMetrics {
  retentionDeleted(deleted: { events: number; attempts: number }): void;
  retentionPayloadsDropped(events: number): void;
}

/** Where a workflow id conflict was found: starting a delivery, resuming one, or handing it a resend. */
export type WorkflowConflictSource = 'relay' | 'sweep' | 'resend';

/** What the relay's start and healing sweep count about events and their workflows (docs/delivery.md). */
export interface DeliveryIdentityMetrics {
  deliveryWorkflowConflict(source: WorkflowConflictSource): void;
  deliveryHealed(status: 'waiting' | 'failed'): void;
}

/** What the outbox relay says about its lead (src/webhook-events/relay-session.ts). */
export interface RelayMetrics extends DeliveryIdentityMetrics {
  relayLeading(leading: boolean): void;
}

/** What the start-up check of the event ids against Temporal sets (src/temporal/event-id-floor.ts). */
export interface EventIdMetrics {
  /** The highest event id found among Temporal's delivery workflows, and the sequence's highest id after the check. */
  eventIdsChecked(check: { highestInTemporal: number; sequence: number }): void;
}

export interface Metrics extends DeliveryMetrics, RetentionMetrics, RelayMetrics, EventIdMetrics, RequestObserver {
  readonly registry: Registry;
  /**
   * Adds the gauges read from Postgres when scraped. Only the API process registers them: every replica would
   * report the same numbers, and each scrape costs queries.
   */
  trackWebhookEvents(db: Db, log: Logger, options: WebhookEventGaugeOptions): void;
}

export interface WebhookEventGaugeOptions {
  /** DELIVERY_STUCK_AFTER_MINUTES: the stuck events' gauge counts what the admin page shows as stuck. */
  stuckAfterMinutes: number;
  /** ENDPOINT_FAILING_AFTER_MINUTES: the failing endpoint's gauge says what the admin page's banner says. */
  endpointFailingAfterMinutes: number;
  /** Now, for the stuck and failing rules; the wall clock unless a test moves it. */
  clock?: () => Date;
}

export interface MetricsOptions {
  /** Node process metrics (CPU, memory, event loop lag, GC): on in the service, off in tests. */
  processMetrics?: boolean;
}

/** The statuses in which an event can be stuck (src/delivery-rules/stuck-events.ts). */
const STUCK_STATUSES = ['waiting', 'failed'] as const satisfies readonly DeliveryStatus[];

// An attempt takes from about a millisecond (loopback) up to the 30 s limit; timeouts land in +Inf.
const ATTEMPT_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];
const HTTP_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A scrape must not hang on a slow database; the gauges are left out of that scrape instead. */
const SCRAPE_QUERY_LIMIT_MS = 2_000;

/**
 * One registry per process (or per app in tests), never prom-client's global one, so that tests running several
 * apps in one Jest worker cannot see each other's numbers.
 */
export function createMetrics({ processMetrics = false }: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts (HTTP POSTs to the subscriber) by outcome and event type',
    labelNames: ['outcome', 'event'] as const,
    registers,
  });
  const attemptDuration = new Histogram({
    name: 'webhook_delivery_attempt_duration_seconds',
    help: 'Duration of one delivery attempt, from sending the request to its answer, error or timeout',
    labelNames: ['outcome'] as const,
    buckets: ATTEMPT_BUCKETS_SECONDS,
    registers,
  });
  // The retention purge's counts: plain totals, without labels.
  const total = (name: string, help: string) => new Counter({ name, help, registers });
  const retentionDeletedEvents = total(
    'webhook_retention_deleted_events_total',
    'Ended webhook events deleted by the retention purge (EVENT_RETENTION_DAYS)',
  );
  const retentionDeletedAttempts = total(
    'webhook_retention_deleted_attempts_total',
    'Delivery attempt rows deleted with their events by the retention purge',
  );
  const retentionDroppedPayloads = total(
    'webhook_retention_dropped_payloads_total',
    'Payloads (with response bodies) of ended webhook events dropped by the retention purge (PAYLOAD_RETENTION_DAYS)',
  );
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'API request duration by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS_SECONDS,
    registers,
  });

  // Every known series starts at 0, so that rate() sees the first attempt of a kind as an increase.
  for (const outcome of ['delivered', 'failed'] as const satisfies readonly AttemptOutcome[]) {
    attemptDuration.zero({ outcome });
    for (const event of WEBHOOK_EVENT_TYPES) deliveries.inc({ outcome, event }, 0);
  }

  return {
    registry,
    ...deliveryIdentityMetrics(registers),
    ...eventIdMetrics(registers),
    ...relayLeadMetric(registers),
    deliveryAttempt({ event, outcome, durationMs }) {
      deliveries.inc({ outcome, event });
      attemptDuration.observe({ outcome }, durationMs / 1000);
    },
    retentionDeleted({ events, attempts }) {
      retentionDeletedEvents.inc(events);
      retentionDeletedAttempts.inc(attempts);
    },
    retentionPayloadsDropped(events) {
      retentionDroppedPayloads.inc(events);
    },
    httpRequest({ method, route, status, durationMs }) {
      httpDuration.observe({ method, route, status: String(status) }, durationMs / 1000);
    },
    trackWebhookEvents(db, log, options) {
      registerDatabaseGauges(registry, db, log, options);
    },
  };
}

/** Workflow id conflicts, foreign workflows refused, deliveries resumed by the healing sweep; every series starting at 0. */
function deliveryIdentityMetrics(registers: Registry[]): DeliveryIdentityMetrics & Pick<DeliveryMetrics, 'foreignDeliveryWorkflow'> {
  const conflicts = new Counter({
    name: 'webhook_delivery_workflow_conflicts_total',
    help: "Events whose workflow id was held by another event's workflow (by where it was found); nothing was started for them",
    labelNames: ['source'] as const,
    registers,
  });
  const foreign = new Counter({
    name: 'webhook_foreign_delivery_workflows_total',
    help: "Delivery attempts refused because their workflow is another installation's (database's) or another event's; nothing was sent or recorded",
    registers,
  });
  const healed = new Counter({
    name: 'webhook_deliveries_healed_total',
    help: 'Deliveries started again by the healing sweep because Temporal had no running workflow for them (by the event status)',
    labelNames: ['status'] as const,
    registers,
  });
  for (const source of ['relay', 'sweep', 'resend'] as const) conflicts.inc({ source }, 0);
  for (const status of ['waiting', 'failed'] as const) healed.inc({ status }, 0);
  return {
    deliveryWorkflowConflict: (source) => conflicts.inc({ source }),
    deliveryHealed: (status) => healed.inc({ status }),
    foreignDeliveryWorkflow: () => foreign.inc(),
  };
}

/** One gauge per process; summed over the relays, normally 1 (docs/observability.md says when it is not). */
function relayLeadMetric(registers: Registry[]): Pick<RelayMetrics, 'relayLeading'> {
  const leading = new Gauge({
    name: 'webhook_relay_leading',
    help: "1 while this process's outbox relay holds the lead: it claims each new event at once, the other relays only events left waiting",
    registers,
  });
  return { relayLeading: (lead) => leading.set(lead ? 1 : 0) };
}

/** The gauges of the last event id check at start: what Temporal held, and where the sequence stands after it. */
function eventIdMetrics(registers: Registry[]): EventIdMetrics {
  const highest = new Gauge({
    name: 'webhook_event_id_highest_in_temporal',
    help: "Highest webhook event id among the namespace's delivery workflows when this process checked at start (0: none)",
    registers,
  });
  const sequence = new Gauge({
    name: 'webhook_event_id_sequence_after_check',
    help: 'Highest webhook event id counted as handed out after the check at start; new events get higher ids',
    registers,
  });
  return {
    eventIdsChecked(check) {
      highest.set(check.highestInTemporal);
      sequence.set(check.sequence);
    },
  };
}

type Labels = Record<string, string>;

interface DatabaseGaugeDefinition {
  name: string;
  help: string;
  labelNames?: string[];
  /** The label sets always reported, zero counts included, so that ratios never see a series vanish. */
  series?: Labels[];
  /** Queries Postgres and answers the value of each series. */
  read: () => Promise<(labels: Labels) => number>;
}

/**
 * A gauge set from Postgres when scraped. When the query fails or is slow, its series read NaN for that scrape:
 * never a stale or a reassuring 0, and without failing the whole scrape (which would hide the other metrics too).
 */
function databaseGauge(registry: Registry, log: Logger, { name, help, labelNames = [], series = [{}], read }: DatabaseGaugeDefinition): void {
  const gauge: Gauge = new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      let valueOf: (labels: Labels) => number;
      try {
        valueOf = await withTimeLimit(read(), SCRAPE_QUERY_LIMIT_MS, 'Postgres');
      } catch (err) {
        log.warn({ err, metric: name }, 'metric not collected: Postgres query failed');
        valueOf = () => NaN;
      }
      for (const labels of series) gauge.set(labels, valueOf(labels));
    },
  });
}

function registerDatabaseGauges(
  registry: Registry,
  db: Db,
  log: Logger,
  { stuckAfterMinutes, endpointFailingAfterMinutes, clock = () => new Date() }: WebhookEventGaugeOptions,
): void {
  databaseGauge(registry, log, {
    name: 'webhook_events',
    help: 'Webhook events by delivery status, as Postgres keeps them counted',
    labelNames: ['status'],
    series: DELIVERY_STATUSES.map((status) => ({ status })),
    async read() {
      const counts = await countEventsByStatus(db);
      return ({ status }) => counts.get(status) ?? 0;
    },
  });
  databaseGauge(registry, log, {
    name: 'webhook_events_stuck',
    help: `Webhook events waiting without an attempt, or failed with the next attempt overdue, for more than ${stuckAfterMinutes} minutes (DELIVERY_STUCK_AFTER_MINUTES)`,
    labelNames: ['status'],
    series: STUCK_STATUSES.map((status) => ({ status })),
    async read() {
      const counts = await countStuckEvents(db, stuckCutoff(clock(), stuckAfterMinutes));
      return ({ status }) => counts.get(status) ?? 0;
    },
  });
  databaseGauge(registry, log, {
    name: 'webhook_endpoint_failing',
    help: `1 when every delivery attempt to the webhook endpoint has failed for ${endpointFailingAfterMinutes} minutes or more (ENDPOINT_FAILING_AFTER_MINUTES), else 0`,
    async read() {
      const { failingSince } = await readFailingStreak(db);
      const failing = isEndpointFailing(failingSince, clock(), endpointFailingAfterMinutes) ? 1 : 0;
      return () => failing;
    },
  });
  databaseGauge(registry, log, {
    name: 'webhook_outbox_pending_events',
    help: 'Webhook events whose delivery workflow the relay has not started yet',
    async read() {
      const count = await countUnstartedEvents(db);
      return () => count;
    },
  });
  databaseGauge(registry, log, {
    name: 'webhook_outbox_oldest_pending_seconds',
    help: 'Age of the oldest webhook event still waiting for the relay; 0 when none waits',
    async read() {
      const age = await oldestUnstartedEventAgeSeconds(db);
      return () => age;
    },
  });
}
