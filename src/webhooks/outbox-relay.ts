import type { Client } from '@temporalio/client';
import pg from 'pg';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { deliveryWorkflowId, startDeliveryWorkflow } from '../temporal/delivery-workflows';
import { startUnstartedEvents } from './event-store';

/** Channel of the trigger in migration 008 (kept literal there: migrations do not change with the code). */
export const WEBHOOK_EVENT_INSERTED_CHANNEL = 'webhook_event_inserted';

export interface RelayPassOptions {
  db: Db;
  client: Client;
  taskQueue: string;
  batchSize?: number;
  /**
   * Deadline of each workflow start. The pass holds its rows locked in a transaction meanwhile, so a Temporal
   * frontend that accepts connections but never answers must fail the start (like Temporal down), not hang it.
   */
  startTimeoutMs?: number;
  /** Where each start (or failed start) is logged with its event id and workflow id. */
  log?: Logger;
}

export interface OutboxRelayOptions extends RelayPassOptions {
  log: Logger;
  /** Fallback poll when no notification arrives (missed while reconnecting, or another writer without the trigger). */
  pollIntervalMs?: number;
  /** Longest pause between tries while Temporal or Postgres is unreachable. */
  maxBackoffMs?: number;
}

export interface OutboxRelay {
  stop(): Promise<void>;
}

const DEFAULTS = { batchSize: 100, pollIntervalMs: 1_000, maxBackoffMs: 30_000, startTimeoutMs: 5_000 };

/**
 * One pass of the relay: takes up to `batchSize` events whose workflow was not started yet, oldest first, locked so
 * that parallel relays share the work (SKIP LOCKED), starts their workflows and marks them started. Rows whose start
 * failed or timed out stay unmarked for the next pass; that error is rethrown after the others are committed.
 * Returns the number of events marked.
 */
export async function relayPendingEvents({
  db,
  client,
  taskQueue,
  batchSize = DEFAULTS.batchSize,
  startTimeoutMs = DEFAULTS.startTimeoutMs,
  log,
}: RelayPassOptions): Promise<number> {
  let failure: unknown;
  const marked = await startUnstartedEvents(db, batchSize, async (events) => {
    const deadline = Date.now() + startTimeoutMs;
    const starts = await Promise.allSettled(
      events.map((event) => client.connection.withDeadline(deadline, () => startDeliveryWorkflow(client, taskQueue, event.eventId))),
    );
    starts.forEach((start, index) => {
      const fields = { eventId: events[index].eventId, workflowId: deliveryWorkflowId(events[index].eventId) };
      if (start.status === 'fulfilled') log?.info({ ...fields, start: start.value }, 'delivery workflow started');
      else log?.debug({ ...fields, err: start.reason }, 'delivery workflow not started; the event stays queued');
    });
    failure = starts.find((start): start is PromiseRejectedResult => start.status === 'rejected')?.reason;
    return events.filter((_, index) => starts[index].status === 'fulfilled').map((event) => event.eventId);
  });
  if (failure !== undefined) throw failure;
  return marked;
}

/** LISTEN on a connection of its own; `close()` is safe to call at any time, also after an error. */
async function listen(db: Db, onNotification: () => void, onLost: (err: Error) => void): Promise<{ close(): Promise<void> }> {
  const connection = new pg.Client(db.client.connectionSettings as pg.ClientConfig);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await connection.end().catch(() => undefined);
  };
  connection.on('notification', onNotification);
  connection.on('error', (err) => {
    void close();
    onLost(err);
  });
  try {
    await connection.connect();
    await connection.query(`LISTEN ${WEBHOOK_EVENT_INSERTED_CHANNEL}`);
  } catch (err) {
    await close();
    throw err;
  }
  return { close };
}

/**
 * Runs the relay until `stop()`: a pass whenever the insert trigger notifies, and every `pollIntervalMs` anyway.
 * At least once: an event whose start failed (Temporal down) stays in the outbox and is tried again with backoff,
 * and the workflow id makes a repeated start harmless.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, log } = options;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULTS.pollIntervalMs;
  const maxBackoffMs = options.maxBackoffMs ?? DEFAULTS.maxBackoffMs;
  const batchSize = options.batchSize ?? DEFAULTS.batchSize;

  let stopped = false;
  let pending = true; // a notification (or a reason to look) arrived since the last pass began
  let wake: (() => void) | undefined;
  let listener: { close(): Promise<void> } | undefined;
  let consecutiveFailures = 0;

  const nudge = () => {
    pending = true;
    wake?.();
  };
  const pause = (ms: number, wakeEarly: boolean) =>
    new Promise<void>((resolve) => {
      if (stopped || (wakeEarly && pending)) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      // While backing off from failures, new events must not shorten the pause; stop() always ends it.
      wake = wakeEarly ? done : () => stopped && done();
    });

  const ensureListening = async () => {
    if (listener) return;
    try {
      listener = await listen(db, nudge, (err) => {
        if (stopped) return;
        log.warn({ err }, 'outbox relay lost its LISTEN connection; reconnecting');
        listener = undefined;
        nudge(); // notifications may have been missed: look now, and listen again
      });
    } catch (err) {
      log.warn({ err }, 'outbox relay could not LISTEN; polling until it can');
    }
  };

  const loop = (async () => {
    while (!stopped) {
      await ensureListening();
      if (stopped) break;
      pending = false;
      let pauseMs = pollIntervalMs;
      try {
        const marked = await relayPendingEvents({ ...options, batchSize });
        if (marked > 0) log.debug({ marked }, 'outbox relay started delivery workflows');
        consecutiveFailures = 0;
        if (marked === batchSize) continue; // more may be waiting
      } catch (err) {
        consecutiveFailures += 1;
        pauseMs = Math.min(maxBackoffMs, pollIntervalMs * 2 ** (consecutiveFailures - 1));
        log.warn({ err, retryInMs: pauseMs }, 'outbox relay could not start delivery workflows; the events stay queued');
      }
      await pause(pauseMs, consecutiveFailures === 0);
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await listener?.close();
    },
  };
}
