import type { Client } from '@temporalio/client';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { DeliveryIdentityMetrics, RelayMetrics } from '../observability/metrics';
import { createWakeUp } from '../shared/wake-up';
import { claimUnstartedEvents, endClaim, highestEventId } from '../webhook-events/relay-claims';
import { openRelaySession, type RelaySession } from '../webhook-events/relay-session';
import { DeliveryWorkflowConflict } from './delivery-identity';
import { type SweepOptions, startDeliverySweep } from './delivery-sweep';
import { deliveryQueueOf, startDeliveryWorkflow } from './delivery-workflows';
import { reportWorkflowConflict } from './workflow-conflicts';

export interface RelayPassOptions {
  db: Db;
  client: Client;
  taskQueue: string;
  batchSize?: number;
  /**
   * Deadline of each workflow start. The pass holds its claims meanwhile, so a Temporal frontend that accepts
   * connections but never answers must fail the start (like Temporal down), not hang it.
   */
  startTimeoutMs?: number;
  /** Where each start (or failed start) is logged with its event id and workflow id. */
  log?: Logger;
  /**
   * Ask for eager workflow starts: `client` runs on the NativeConnection of a delivery worker in this process. A
   * function is asked at each pass (a versioned worker only while its version is current: src/runtime/components.ts).
   */
  eagerStart?: boolean | (() => boolean);
  /** Counts workflow id conflicts (and, in the sweep, healed deliveries). */
  metrics?: DeliveryIdentityMetrics;
  /** Claim only events up to this id: what a relay without the lead takes. */
  upToId?: number | null;
}

export interface OutboxRelayOptions extends RelayPassOptions {
  log: Logger;
  /** Also says whether this relay holds the lead. */
  metrics?: RelayMetrics;
  /**
   * How long an event must have waited before a relay without the lead claims it: the leading relay claims each
   * event within milliseconds, so one it left this long is stuck there (a frozen process, a Temporal it cannot
   * reach) or behind a burst, where a second relay helps.
   */
  leftWaitingMs?: number;
  /**
   * Whether this relay may hold the lead now, asked at each pass: a versioned delivery process's only while its
   * worker's version is current, so that in a deploy the lead goes to the release whose workers run new deliveries
   * and whose starts are eager (src/runtime/components.ts). Always, when not given.
   */
  mayLead?: () => boolean;
  /** Fallback poll when no notification arrives (missed while reconnecting, or another writer without the trigger). */
  pollIntervalMs?: number;
  /** Longest pause between tries while Temporal or Postgres is unreachable. */
  maxBackoffMs?: number;
  /**
   * Passes under way at once. A pass ends only when its slowest start is answered; a notification meanwhile begins
   * another pass (the claims keep their events apart) instead of waiting for it (BENCHMARKS.md, issue 29).
   */
  maxConcurrentPasses?: number;
  /** The healing sweep that runs beside the relay (src/temporal/delivery-sweep.ts); false: none. */
  sweep?: false | Pick<SweepOptions, 'intervalMs' | 'marginMs' | 'batchSize'>;
}

export interface OutboxRelay {
  stop(): Promise<void>;
}

const DEFAULTS = { batchSize: 100, pollIntervalMs: 1_000, maxBackoffMs: 30_000, startTimeoutMs: 5_000, maxConcurrentPasses: 4, leftWaitingMs: 3_000 };

/** A claim lasts this many start deadlines: a pass ends its claims long before, a dead relay's run out in 30 s. */
const CLAIM_TO_START_TIMEOUT = 6;

/**
 * One pass of the relay: claims up to `batchSize` events whose workflow was not started yet, oldest first (parallel
 * relays claim different rows), and starts their workflows. An event whose workflow started eagerly keeps its claim:
 * this process's worker runs the first attempt at once, and that attempt marks the event started
 * (src/webhook-events/attempts.ts) in the statement it makes anyway, so the pass spends no statement on it. Where
 * the task does not run here after all (the process died, the worker refused the task, the task timed out), Temporal
 * hands it to another worker within 10 s, whose attempt marks the event; should no attempt begin before the claim
 * runs out (a previous release's worker, or an attempt waiting for a slot that long), the next pass claims the event
 * again, finds its workflow, and marks it started. A workflow started the usual way may be run by any worker, later,
 * and perhaps by the previous release's during a deploy, whose attempt marks nothing: the pass marks it. So in one
 * statement at the end, only where some start was not eager, the pass marks started those events and the ones whose
 * workflow existed already, keeps the claim of those whose workflow id another event holds, and frees those whose
 * start failed or timed out, for the next pass. When no start of the pass succeeded, that error is rethrown once the
 * claims are ended (the relay backs off: Temporal is down or refuses). When others succeeded, Temporal is up and only slow: a start that
 * missed its deadline under a backlog (BENCHMARKS.md, issue 29) is logged and taken again by the next pass, and the
 * relay goes on, rather than holding every event behind it for a backoff. An event whose workflow id is held by
 * another event's workflow is not started: reported (src/temporal/workflow-conflicts.ts), and its claim kept, so that
 * it is tried again when the claim runs out rather than in every pass. No row stays locked while Temporal answers, so
 * an attempt that an eager start ran at once never waits for this pass. Returns the number of events started (or
 * found started).
 */
export async function relayPendingEvents({
  db,
  client,
  taskQueue,
  batchSize = DEFAULTS.batchSize,
  startTimeoutMs = DEFAULTS.startTimeoutMs,
  log,
  eagerStart = false,
  metrics,
  upToId = null,
}: RelayPassOptions): Promise<number> {
  const queue = await deliveryQueueOf(db, taskQueue);
  // Longer than any pass can take, so that only a relay that died leaves a claim to run out.
  const claim = await claimUnstartedEvents(db, batchSize, startTimeoutMs * CLAIM_TO_START_TIMEOUT, upToId);
  const { events } = claim;
  const eager = typeof eagerStart === 'function' ? eagerStart() : eagerStart;
  const deadline = Date.now() + startTimeoutMs;
  const starts = await Promise.allSettled(
    events.map((event) => client.connection.withDeadline(deadline, () => startDeliveryWorkflow(client, queue, event, { eager }))),
  );
  const leftToAttempt = new Set<number>();
  const started: number[] = [];
  const conflicts: DeliveryWorkflowConflict[] = [];
  let failure: unknown;
  starts.forEach((start, index) => {
    const { eventId, workflowId } = events[index].identity;
    if (start.status === 'fulfilled') {
      if (start.value === 'started-eagerly') leftToAttempt.add(eventId);
      else started.push(eventId);
      // A new workflow's line would be one more per event on the delivery path, its attempt's line follows within
      // milliseconds; a workflow that ran already (an earlier pass whose end was lost, or an eager start whose first
      // attempt did not begin within the claim) is worth an operator's eye.
      const level = start.value === 'already-started' ? 'info' : 'debug';
      log?.[level]({ eventId, workflowId, start: start.value }, 'delivery workflow started');
    } else if (start.reason instanceof DeliveryWorkflowConflict) {
      conflicts.push(start.reason);
    } else {
      failure ??= start.reason;
      log?.debug({ eventId, workflowId, err: start.reason }, 'delivery workflow not started; the event stays queued');
    }
  });
  await endClaim(
    db,
    { ...claim, events: events.filter((event) => !leftToAttempt.has(event.identity.eventId)) },
    started,
    conflicts.map((conflict) => conflict.identity.eventId),
  );
  for (const conflict of conflicts) await reportWorkflowConflict({ db, log, metrics }, conflict, 'relay');
  const startedCount = leftToAttempt.size + started.length;
  if (failure && startedCount === 0) throw failure;
  if (failure) {
    const notStarted = events.length - startedCount - conflicts.length;
    log?.warn({ err: failure, started: startedCount, notStarted }, 'some delivery workflows not started; the next pass takes their events again');
  }
  return startedCount;
}

/**
 * Runs the relay until `stop()`. While it holds the lead (src/webhook-events/relay-session.ts), or has no session to
 * wait for it on, a pass takes every event: whenever the insert trigger notifies, and every `pollIntervalMs` anyway,
 * up to `maxConcurrentPasses` at once. While another relay leads, a pass every `pollIntervalMs` takes only the events
 * left waiting `leftWaitingMs`, and the lead passes to this relay the moment the leader's session ends. At least once:
 * an event whose start failed (Temporal down) stays in the outbox and is tried again with backoff, and the workflow id
 * makes a repeated start harmless.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const {
    log,
    pollIntervalMs = DEFAULTS.pollIntervalMs,
    maxBackoffMs = DEFAULTS.maxBackoffMs,
    batchSize = DEFAULTS.batchSize,
    maxConcurrentPasses = DEFAULTS.maxConcurrentPasses,
    leftWaitingMs = DEFAULTS.leftWaitingMs,
  } = options;
  const sweep = options.sweep === false ? undefined : startDeliverySweep({ ...options, ...options.sweep, batchSize: options.sweep?.batchSize });
  const wakeUp = createWakeUp();
  const session = keepSession(options.db, log, wakeUp.notify, options);
  const waited = eventsLeftWaiting(options.db, leftWaitingMs);
  const backoffMs = (failures: number) => Math.min(maxBackoffMs, pollIntervalMs * 2 ** (failures - 1));
  const passes = new Set<Promise<void>>();
  let failures = 0;
  let stopped = false;

  const pass = async () => {
    try {
      const upToId = session.takesEveryEvent() ? null : await waited.upToId();
      // Without the lead, nothing has waited long enough until the first note is that old.
      if (upToId === undefined) return;
      const started = await relayPendingEvents({ ...options, batchSize, upToId });
      if (started > 0) log.debug({ started }, 'outbox relay started delivery workflows');
      failures = 0;
      if (started === batchSize) wakeUp.notify(); // more may be waiting
    } catch (err) {
      failures += 1;
      log.warn({ err, retryInMs: backoffMs(failures) }, 'outbox relay could not start delivery workflows; the events stay queued');
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await session.ensure();
      if (stopped) break;
      if (passes.size >= maxConcurrentPasses) {
        await Promise.race(passes);
        continue;
      }
      const running: Promise<void> = pass().finally(() => passes.delete(running));
      passes.add(running);
      // A failed pass is waited for, so that its backoff starts from its end; while backing off, new events must not
      // shorten the pause.
      if (failures > 0) await running;
      await wakeUp.wait(failures === 0 ? pollIntervalMs : backoffMs(failures), { early: failures === 0 });
    }
    await Promise.all(passes);
  })();

  return {
    async stop() {
      stopped = true;
      wakeUp.stop();
      // The lead first: the next relay takes the events that come meanwhile, while this one ends its passes.
      await session.close();
      await Promise.all([loop, sweep?.stop()]);
    },
  };
}

/**
 * What a relay without the lead may take: the events that were there `leftWaitingMs` ago. It notes the highest event
 * id at each pass and answers the newest note at least that old; undefined while none is. Ids, not the rows'
 * `created_at`: that is the writing process's clock, not Postgres's.
 */
function eventsLeftWaiting(db: Db, leftWaitingMs: number) {
  let notes: Array<{ at: number; highestId: number }> = [];
  return {
    async upToId(): Promise<number | undefined> {
      const now = Date.now();
      notes.push({ at: now, highestId: await highestEventId(db) });
      const old = notes.filter(({ at }) => at <= now - leftWaitingMs).length;
      if (old === 0) return undefined;
      notes = notes.slice(old - 1);
      return notes[0].highestId;
    },
  };
}

/**
 * The relay's session, opened again after it is lost: a lost session may have missed notifications and has given up
 * the lead, so losing it counts as a notification. While it cannot be opened, the relay takes every event by polling:
 * with no session to wait for the lead on, it cannot tell whether another relay leads. While the relay may not lead
 * (`mayLead`), it holds no session and takes only what was left waiting.
 */
function keepSession(db: Db, log: Logger, notify: () => void, { metrics, mayLead = () => true }: Pick<OutboxRelayOptions, 'metrics' | 'mayLead'>) {
  let session: RelaySession | undefined;
  let standingBack = false;
  let closed = false;
  const giveUp = async () => {
    metrics?.relayLeading(false);
    await session?.close();
    session = undefined;
  };
  return {
    takesEveryEvent: () => !standingBack && (!session?.open || session.leading),
    async ensure() {
      if (closed) return;
      standingBack = !mayLead();
      if (standingBack) {
        if (session) log.info('outbox relay stands back from the lead: its worker version is not current');
        await giveUp();
        return;
      }
      if (session?.open) return;
      try {
        session = await openRelaySession(db, {
          onInserted: notify,
          onLead: () => {
            log.info('outbox relay took the lead: it claims new events at once');
            metrics?.relayLeading(true);
            notify();
          },
          onLost: (err) => {
            if (closed) return;
            log.warn({ err }, 'outbox relay lost its session and any lead; reconnecting');
            session = undefined;
            metrics?.relayLeading(false);
            notify();
          },
        });
      } catch (err) {
        log.warn({ err }, 'outbox relay could not open its session; polling until it can');
      }
    },
    async close() {
      closed = true;
      await giveUp();
    },
  };
}
