import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import type { Db } from '../../src/db/knex';
import type { TracedStart } from './traced-relay';
import type { EventTiming } from './platform-load';
import type { Receiver } from './receiver';
import { summarize } from './stats';

/** Wall-clock ms (Temporal's and Postgres's clock) of a performance.now() reading of this process. */
export const wallClock = (performanceMs: number) => performance.timeOrigin + performanceMs;

/** What a workflow's history says about one event: when Temporal recorded the start, its first task, its end. */
export interface WorkflowTimes {
  startedMs: number;
  taskScheduledMs: number;
  taskStartedMs: number;
  closedMs: number;
  /** Events in the history, and workflow tasks started (an eager task that failed or timed out counts again). */
  historyEvents: number;
  workflowTasks: number;
}

/** Reads the histories of these workflows, a few at a time (after a phase, so as not to disturb it). */
export async function workflowTimes(client: Client, workflowIds: string[], parallel = 8): Promise<Map<string, WorkflowTimes>> {
  const times = new Map<string, WorkflowTimes>();
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < workflowIds.length) {
        const id = workflowIds[next++];
        const { events } = await client.workflow.getHandle(id).fetchHistory();
        const first = (attribute: string) => {
          const event = events?.find((candidate) => (candidate as Record<string, unknown>)[attribute]);
          return event ? tsToMs(event.eventTime) : Number.NaN;
        };
        times.set(id, {
          startedMs: first('workflowExecutionStartedEventAttributes'),
          taskScheduledMs: first('workflowTaskScheduledEventAttributes'),
          taskStartedMs: first('workflowTaskStartedEventAttributes'),
          closedMs: first('workflowExecutionCompletedEventAttributes'),
          historyEvents: events?.length ?? 0,
          workflowTasks: events?.filter((event) => event.workflowTaskStartedEventAttributes).length ?? 0,
        });
      }
    }),
  );
  return times;
}

/** The stored workflow id of each of these events. */
export async function workflowIdsOf(db: Db, eventIds: number[]): Promise<Map<number, string>> {
  const rows: Array<{ id: number; workflow_id: string }> = await db('webhook_events').whereIn('id', eventIds).select('id', 'workflow_id');
  return new Map(rows.map((row) => [Number(row.id), row.workflow_id]));
}

/** Up to `count` of the phase's delivered events, evenly spread over it. */
export function sample<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  return Array.from({ length: count }, (_, index) => items[Math.floor((index * items.length) / count)]);
}

/** The relay's side of an event of the service: its pass (the claim's time) and its workflow start. */
export interface RelaySide {
  /** Undefined for an event started from its notification, unclaimed, whose start was not traced. */
  passBeganMs?: number;
  /** The pass's last start answered: the pass commits right after it. */
  passLastAnsweredMs?: number;
  start?: TracedStart;
  attemptStartedMs?: number;
}

export function readRelayTrace(file: string): Map<string, TracedStart> {
  const starts = new Map<string, TracedStart>();
  if (!existsSync(file)) return starts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const start = JSON.parse(line) as TracedStart;
    if (start.ok) starts.set(start.workflowId, start);
  }
  return starts;
}

/**
 * The relay's passes over these events: a claiming pass claims its events in one statement, whose `now()` every
 * event it claimed got as `relay_claimed_at` (kept once the event is started). A pass over notified events claims
 * none (src/temporal/outbox-relay.ts): the sending of its traced start stands for its beginning, and an untraced one
 * is left out. Returns each event's pass and workflow start, and a summary of the passes.
 */
export async function relayPasses(db: Db, eventIds: number[], trace: Map<string, TracedStart>) {
  const rows: Array<{ id: number; workflow_id: string; began_ms: number | null; created_ms: number; attempt_ms: number | null }> = (
    await db.raw(
      `SELECT e.id, e.workflow_id, extract(epoch FROM e.relay_claimed_at) * 1000 AS began_ms, extract(epoch FROM e.created_at) * 1000 AS created_ms,
              extract(epoch FROM a.started_at) * 1000 AS attempt_ms
         FROM webhook_events e LEFT JOIN webhook_delivery_attempts a ON a.event_id = e.id AND a.number = 1
        WHERE e.id = ANY(?) AND e.workflow_started_at IS NOT NULL`,
      [eventIds],
    )
  ).rows;
  const passes = new Map<number, { began: number; lastAnswered: number; size: number }>();
  const byEvent = new Map<number, RelaySide>();
  for (const row of rows) {
    const start = trace.get(row.workflow_id);
    const began = row.began_ms === null ? start?.sentAtMs : Number(row.began_ms);
    if (began !== undefined) {
      const pass = passes.get(began) ?? { began, lastAnswered: Number.NaN, size: 0 };
      pass.size += 1;
      if (start) pass.lastAnswered = Number.isNaN(pass.lastAnswered) ? start.answeredAtMs : Math.max(pass.lastAnswered, start.answeredAtMs);
      passes.set(began, pass);
    }
    byEvent.set(Number(row.id), { passBeganMs: began, start, attemptStartedMs: row.attempt_ms === null ? undefined : Number(row.attempt_ms) });
  }
  for (const side of byEvent.values()) side.passLastAnsweredMs = side.passBeganMs === undefined ? undefined : passes.get(side.passBeganMs)?.lastAnswered;
  const ordered = [...passes.values()].sort((a, b) => a.began - b.began);
  const gaps = ordered.slice(1).map((pass, index) => pass.began - ordered[index].lastAnswered).filter(Number.isFinite);
  const summary = {
    passes: ordered.length,
    eventsPerPass: summarize(ordered.map((pass) => pass.size)),
    /** From the claim to its last workflow start answered. */
    passMs: summarize(ordered.map((pass) => pass.lastAnswered - pass.began).filter(Number.isFinite)),
    /** From a pass's last start answered to the next pass's claim (ending the claim, pause, wake-up). */
    gapMs: summarize(gaps),
    /** Share of the phase the relay spent inside passes. */
    busyShare:
      ordered.length > 1
        ? ordered.reduce((sum, pass) => sum + (Number.isFinite(pass.lastAnswered) ? pass.lastAnswered - pass.began : 0), 0) /
          (ordered.at(-1)!.lastAnswered - ordered[0].began)
        : Number.NaN,
  };
  return { byEvent, summary };
}

export interface StageEvent {
  timing: EventTiming;
  receivedMs: number;
  temporal?: WorkflowTimes;
  relay?: RelaySide;
}

/** Stage rows (p50/p95/max per stage) from the events traced through a phase; a stage is left out where no event has it. */
export function stageRows(events: StageEvent[]) {
  const stages: Array<[string, (event: StageEvent) => number | undefined]> = [
    ['offer: due → answered (platform call / workflow start)', (e) => e.timing.answeredAt! - e.timing.sentAt],
    ['offer answered → Temporal recorded the start (notification or claim, and the start)', (e) => e.temporal && e.temporal.startedMs - wallClock(e.timing.answeredAt!)],
    ['offer answered → relay pass began (its claim)', (e) => e.relay?.passBeganMs && e.relay.passBeganMs - wallClock(e.timing.answeredAt!)],
    ['relay pass began → its workflow start sent', (e) => e.relay?.start && e.relay.passBeganMs && e.relay.start.sentAtMs - e.relay.passBeganMs],
    ['start sent → answered by Temporal', (e) => e.relay?.start && e.relay.start.answeredAtMs - e.relay.start.sentAtMs],
    ['start answered → pass commits (its slowest start)', (e) => e.relay?.start && e.relay.passLastAnsweredMs! - e.relay.start.answeredAtMs],
    ['relay pass began → Temporal recorded the start', (e) => e.relay?.passBeganMs && e.temporal && e.temporal.startedMs - e.relay.passBeganMs],
    ['Temporal recorded the start → first workflow task picked up', (e) => e.temporal && e.temporal.taskStartedMs - e.temporal.startedMs],
    ['first workflow task picked up → POST starts', (e) => e.relay?.attemptStartedMs && e.temporal && e.relay.attemptStartedMs - e.temporal.taskStartedMs],
    ['first workflow task picked up → subscriber has the body', (e) => e.temporal && wallClock(e.receivedMs) - e.temporal.taskStartedMs],
    ['subscriber has the body → workflow completed', (e) => e.temporal && e.temporal.closedMs - wallClock(e.receivedMs)],
    ['end to end: due → subscriber has the body', (e) => e.receivedMs - e.timing.sentAt],
    ['history events per delivery (count, not ms)', (e) => e.temporal?.historyEvents],
    ['workflow tasks per delivery (count, not ms)', (e) => e.temporal?.workflowTasks],
  ];
  return stages.flatMap(([stage, of]) => {
    const values = events.map(of).filter((value): value is number => value !== undefined && Number.isFinite(value));
    return values.length === 0 ? [] : [{ stage, ...summarize(values) }];
  });
}

/** The phase's delivered events, with their receipt. */
export function deliveredEvents(timings: EventTiming[], receiver: Receiver) {
  return timings.flatMap((timing) => {
    const receipt = receiver.receipts.get(timing.key);
    return receipt ? [{ timing, receipt }] : [];
  });
}
