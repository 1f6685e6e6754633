import type { Client } from '@temporalio/client';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { DeliveryIdentityMetrics, RelayMetrics } from '../observability/metrics';
import { createWakeUp } from '../shared/wake-up';
import type { EventToStart } from '../webhook-events/event-deliveries';
import { notifiedEvent } from '../webhook-events/outbox';
import { claimUnstartedEvents, endClaim, endNotifiedStarts, highestEventId } from '../webhook-events/relay-claims';
import { openRelaySession, type RelaySession } from '../webhook-events/relay-session';
import { DeliveryWorkflowConflict } from './delivery-identity';
import { type SweepOptions, startDeliverySweep } from './delivery-sweep';
import { type DeliveryQueue, deliveryQueueOf, startDeliveryWorkflow } from './delivery-workflows';
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
  /** Claim none of these: the events a leading relay started from their notification, without a claim. */
  notClaimed?: number[];
  /** Told the events claimed, before their starts: the relay's notified passes leave them to this one. */
  onClaimed?: (eventIds: number[]) => void;
}

export interface OutboxRelayOptions extends RelayPassOptions {
  log: Logger;
  /** Also says whether this relay holds the lead. */
  metrics?: RelayMetrics;
  /**
   * How long an event must have waited before a relay without the lead claims it: the leading relay starts each
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

/**
 * How long a claim's events are not taken from their notification: a notification is delivered at its commit, so one
 * that arrives after the claim that took its event does so within milliseconds.
 */
const CLAIMED_KEPT_MS = 5_000;

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
  notClaimed = [],
  onClaimed,
}: RelayPassOptions): Promise<number> {
  const queue = await deliveryQueueOf(db, taskQueue);
  // Longer than any pass can take, so that only a relay that died leaves a claim to run out.
  const claim = await claimUnstartedEvents(db, batchSize, startTimeoutMs * CLAIM_TO_START_TIMEOUT, { upToId, notClaimed });
  onClaimed?.(claim.events.map((event) => event.identity.eventId));
  const starts = await startEvents(client, queue, claim.events, { eagerStart, startTimeoutMs, log });
  await endClaim(
    db,
    { ...claim, events: claim.events.filter((event) => !starts.leftToAttempt.has(event.identity.eventId)) },
    starts.started,
    starts.conflicts.map((conflict) => conflict.identity.eventId),
  );
  return passEnded({ db, log, metrics }, starts);
}

/**
 * A pass of the leading relay over events it was notified of (migration 025), which it starts without claiming them
 * first: the relay keeps every other pass of its own off them meanwhile (`notClaimed`), and a relay without the lead
 * takes only events left waiting for seconds, which an eager start's first attempt has marked long before. Its end
 * is a claim's (relayPendingEvents), without the claim: one statement, only where some start was not eager, marks
 * started the events it started or found started and claims those whose workflow id another event holds; an event
 * whose start failed stays unclaimed, for the next claim. The relay is told which events its claims need no longer
 * leave alone (`released`): all but those left to their first attempt. Throws as a pass does when no start succeeded.
 */
export async function startNotifiedEvents(
  { db, client, taskQueue, startTimeoutMs = DEFAULTS.startTimeoutMs, log, eagerStart = false, metrics }: RelayPassOptions,
  events: EventToStart[],
  released: (eventIds: number[]) => void,
): Promise<number> {
  const queue = await deliveryQueueOf(db, taskQueue);
  const starts = await startEvents(client, queue, events, { eagerStart, startTimeoutMs, log });
  const held = starts.conflicts.map((conflict) => conflict.identity.eventId);
  await endNotifiedStarts(db, starts.started, held);
  released([...starts.failed, ...starts.started, ...held]);
  return passEnded({ db, log, metrics }, starts);
}

interface Starts {
  /** Started eagerly: their first attempt, in this process, marks them started. */
  leftToAttempt: Set<number>;
  /** Started the usual way, or found started: the pass marks them. */
  started: number[];
  /** Their workflow id is held by another event's workflow. */
  conflicts: DeliveryWorkflowConflict[];
  /** Not started (an error, or the deadline): taken again by a later pass. */
  failed: number[];
  failure?: unknown;
}

/** Starts the events' workflows at once, each within the same deadline, and sorts what came of each start. */
async function startEvents(
  client: Client,
  queue: DeliveryQueue,
  events: EventToStart[],
  { eagerStart, startTimeoutMs, log }: Required<Pick<RelayPassOptions, 'eagerStart' | 'startTimeoutMs'>> & Pick<RelayPassOptions, 'log'>,
): Promise<Starts> {
  const eager = typeof eagerStart === 'function' ? eagerStart() : eagerStart;
  const deadline = Date.now() + startTimeoutMs;
  const results = await Promise.allSettled(
    events.map((event) => client.connection.withDeadline(deadline, () => startDeliveryWorkflow(client, queue, event, { eager }))),
  );
  const starts: Starts = { leftToAttempt: new Set(), started: [], conflicts: [], failed: [] };
  results.forEach((start, index) => {
    const { eventId, workflowId } = events[index].identity;
    if (start.status === 'fulfilled') {
      if (start.value === 'started-eagerly') starts.leftToAttempt.add(eventId);
      else starts.started.push(eventId);
      // A new workflow's line would be one more per event on the delivery path, its attempt's line follows within
      // milliseconds; a workflow that ran already (an earlier pass whose end was lost, or an eager start whose first
      // attempt did not begin within the claim) is worth an operator's eye.
      const level = start.value === 'already-started' ? 'info' : 'debug';
      log?.[level]({ eventId, workflowId, start: start.value }, 'delivery workflow started');
    } else if (start.reason instanceof DeliveryWorkflowConflict) {
      starts.conflicts.push(start.reason);
    } else {
      starts.failure ??= start.reason;
      starts.failed.push(eventId);
      log?.debug({ eventId, workflowId, err: start.reason }, 'delivery workflow not started; the event stays queued');
    }
  });
  return starts;
}

/** Reports the pass's conflicts, and answers how many events it started; throws its failure when it started none. */
async function passEnded(
  { db, log, metrics }: Pick<RelayPassOptions, 'db' | 'log' | 'metrics'>,
  { leftToAttempt, started, conflicts, failed, failure }: Starts,
): Promise<number> {
  for (const conflict of conflicts) await reportWorkflowConflict({ db, log, metrics }, conflict, 'relay');
  const startedCount = leftToAttempt.size + started.length;
  if (failure && startedCount === 0) throw failure;
  if (failure) {
    log?.warn({ err: failure, started: startedCount, notStarted: failed.length }, 'some delivery workflows not started; the next pass takes their events again');
  }
  return startedCount;
}

/**
 * Runs the relay until `stop()`. While it holds the lead (src/webhook-events/relay-session.ts), each notification of
 * the insert trigger names an event with what its start needs (migration 025), and a pass starts the events notified
 * since the last without claiming them (startNotifiedEvents). Every `pollIntervalMs` a pass claims instead
 * (relayPendingEvents): whatever no notification named (one missed while reconnecting, facts too long to notify,
 * another writer without the trigger) and whatever was not started, all but the events this relay started from their
 * notification within a claim's time. Up to `maxConcurrentPasses` at once. A relay with no session to wait for the
 * lead on claims every event at each poll; while another relay leads, a pass every `pollIntervalMs` takes only the
 * events left waiting `leftWaitingMs`, and the lead passes to this relay the moment the leader's session ends. At
 * least once: an event whose start failed (Temporal down) stays in the outbox and is tried again with backoff, and
 * the workflow id makes a repeated start harmless.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const {
    log,
    pollIntervalMs = DEFAULTS.pollIntervalMs,
    maxBackoffMs = DEFAULTS.maxBackoffMs,
    batchSize = DEFAULTS.batchSize,
    maxConcurrentPasses = DEFAULTS.maxConcurrentPasses,
    leftWaitingMs = DEFAULTS.leftWaitingMs,
    startTimeoutMs = DEFAULTS.startTimeoutMs,
  } = options;
  const sweep = options.sweep === false ? undefined : startDeliverySweep({ ...options, ...options.sweep, batchSize: options.sweep?.batchSize });
  const wakeUp = createWakeUp();
  const notified = notifiedEvents(batchSize, startTimeoutMs * CLAIM_TO_START_TIMEOUT);
  const session = keepSession(
    options.db,
    log,
    {
      inserted: (payload) => {
        notified.add(payload);
        wakeUp.notify();
      },
      missed: () => {
        notified.claimWanted();
        wakeUp.notify();
      },
    },
    options,
  );
  const waited = eventsLeftWaiting(options.db, leftWaitingMs);
  const backoffMs = (failures: number) => Math.min(maxBackoffMs, pollIntervalMs * 2 ** (failures - 1));
  const passes = new Set<Promise<void>>();
  let failures = 0;
  let stopped = false;
  // Monotonic: a clock set back must not put the next claim off.
  let nextClaimAt = 0;

  /** The notified events while it takes every event; a claim at each poll, after a failure, or when one is wanted. */
  const pass = async () => {
    const takesEvery = session.takesEveryEvent();
    const notifiedOnly = takesEvery && failures === 0 && performance.now() < nextClaimAt ? notified.take() : undefined;
    try {
      let started: number;
      if (notifiedOnly) {
        if (notifiedOnly.length === 0) return;
        started = await startNotifiedEvents(options, notifiedOnly, notified.released);
      } else {
        nextClaimAt = performance.now() + pollIntervalMs;
        notified.drop(); // the claim takes them from the table
        const upToId = takesEvery ? null : await waited.upToId();
        // Without the lead, nothing has waited long enough until the first note is that old.
        if (upToId === undefined) return;
        started = await relayPendingEvents({ ...options, batchSize, upToId, notClaimed: notified.startedLately(), onClaimed: notified.claimed });
        if (started === batchSize) notified.claimWanted(); // more may be waiting
      }
      if (started > 0) log.debug({ started }, 'outbox relay started delivery workflows');
      failures = 0;
      if (notified.pending()) wakeUp.notify();
    } catch (err) {
      if (notifiedOnly) notified.released(notifiedOnly.map((event) => event.identity.eventId));
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
      const untilNextClaim = Math.max(1, nextClaimAt - performance.now());
      await wakeUp.wait(failures === 0 ? untilNextClaim : backoffMs(failures), { early: failures === 0 });
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
 * The leading relay's notified events: those named since the last pass took them, and those it started from their
 * notification within a claim's time (`claimMs`), which its claims leave alone meanwhile (an eager start's first
 * attempt marks its event started within milliseconds; until then the row looks unstarted). More than `batchSize`
 * waiting, or a notification that names no event, asks for a claim instead, which takes them all from the table. An
 * event a claim of this relay took is not taken from a notification that arrives after it (`CLAIMED_KEPT_MS`).
 */
function notifiedEvents(batchSize: number, claimMs: number) {
  let waiting: EventToStart[] = [];
  let claim = false;
  const startedAt = new Map<number, number>();
  const claimedAt = new Map<number, number>();
  /** Drops the entries older than `ms` from a map kept in the order of its times. */
  const prune = (times: Map<number, number>, ms: number) => {
    const oldest = performance.now() - ms;
    for (const [eventId, at] of times) {
      if (at >= oldest) break;
      times.delete(eventId);
    }
  };
  /** Notes the events at the present time, moving each to the end so that the map stays in the order of its times. */
  const note = (times: Map<number, number>, eventIds: number[]) => {
    const now = performance.now();
    for (const eventId of eventIds) {
      times.delete(eventId);
      times.set(eventId, now);
    }
  };
  return {
    add(payload: string | undefined) {
      const event = notifiedEvent(payload);
      if (event && waiting.length < batchSize) waiting.push(event);
      else claim = true;
    },
    claimWanted: () => {
      claim = true;
    },
    /** Whether a pass has something to do: notified events, or a claim asked for. */
    pending: () => waiting.length > 0 || claim,
    /** The notified events no claim took, noted as started now; undefined when a claim is wanted. */
    take(): EventToStart[] | undefined {
      if (claim) return undefined;
      prune(claimedAt, CLAIMED_KEPT_MS);
      const events = waiting.filter((event) => !claimedAt.has(event.identity.eventId));
      waiting = [];
      note(startedAt, events.map((event) => event.identity.eventId));
      return events;
    },
    /** Events its claims need no longer leave alone: marked started, held, or not started (the next claim takes them). */
    released: (eventIds: number[]) => eventIds.forEach((eventId) => startedAt.delete(eventId)),
    /** A claim is under way: it takes the waiting events from the table. */
    drop() {
      waiting = [];
      claim = false;
    },
    /** What a claim took: a notification of one of them arriving after the claim names nothing to start. */
    claimed: (eventIds: number[]) => {
      prune(claimedAt, CLAIMED_KEPT_MS); // also where no notification comes (a relay polling without a session)
      note(claimedAt, eventIds);
      waiting = waiting.filter((event) => !claimedAt.has(event.identity.eventId));
    },
    /** The events started from their notification within the last `claimMs`, oldest first. */
    startedLately(): number[] {
      prune(startedAt, claimMs);
      return [...startedAt.keys()];
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
function keepSession(
  db: Db,
  log: Logger,
  { inserted, missed }: { inserted: (payload: string | undefined) => void; missed: () => void },
  { metrics, mayLead = () => true }: Pick<OutboxRelayOptions, 'metrics' | 'mayLead'>,
) {
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
          onInserted: inserted,
          onLead: () => {
            log.info('outbox relay took the lead: it starts new events at once');
            metrics?.relayLeading(true);
            missed();
          },
          onLost: (err) => {
            if (closed) return;
            log.warn({ err }, 'outbox relay lost its session and any lead; reconnecting');
            session = undefined;
            metrics?.relayLeading(false);
            missed();
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
