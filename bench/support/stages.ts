import { performance } from 'node:perf_hooks';
import type { EventLoad } from './platform-load';
import type { Receiver } from './receiver';
import type { Stack } from './stack';
import { summarize } from './stats';

/** Where the time of one phase went, per event: the platform call, waiting for the relay, Temporal, the POST. */
export async function stages(stack: Stack, receiver: Receiver, load: EventLoad, keys: Set<string>) {
  const byEvent = new Map<number, { answeredAt: number; receivedAt: number }>();
  const platformCall: number[] = [];
  for (const timing of load.timings) {
    const receipt = receiver.receipts.get(timing.key);
    if (keys.has(timing.key) && receipt && timing.answeredAt) {
      byEvent.set(receipt.eventId, { answeredAt: timing.answeredAt, receivedAt: receipt.atMs });
      platformCall.push(timing.answeredAt - timing.sentAt);
    }
  }
  const rows: Array<{ id: number; picked_ms: number | null; attempt_ms: number }> = (
    await stack.db.raw(
      `SELECT e.id, extract(epoch FROM e.relay_claimed_at) * 1000 AS picked_ms,
              extract(epoch FROM a.started_at) * 1000 AS attempt_ms
         FROM webhook_events e JOIN webhook_delivery_attempts a ON a.event_id = e.id AND a.number = 1
        WHERE e.id = ANY(?)`,
      [[...byEvent.keys()]],
    )
  ).rows;
  const toEpoch = (t: number) => performance.timeOrigin + t;
  const toAttempt: number[] = [];
  const relayWait: number[] = [];
  const temporalToAttempt: number[] = [];
  const attemptToReceipt: number[] = [];
  for (const row of rows) {
    const event = byEvent.get(Number(row.id))!;
    toAttempt.push(Number(row.attempt_ms) - toEpoch(event.answeredAt));
    // Only a claimed event has the time the relay picked it: the leader starts a notified one unclaimed.
    if (row.picked_ms !== null) {
      relayWait.push(Number(row.picked_ms) - toEpoch(event.answeredAt));
      temporalToAttempt.push(Number(row.attempt_ms) - Number(row.picked_ms));
    }
    attemptToReceipt.push(toEpoch(event.receivedAt) - Number(row.attempt_ms));
  }
  return [
    { stage: 'platform call: due → answered', ...summarize(platformCall) },
    { stage: 'answer of the platform call → attempt activity starts (relay and Temporal)', ...summarize(toAttempt) },
    { stage: '  of the claimed events: answer → relay picks the event', ...summarize(relayWait) },
    { stage: '  of the claimed events: relay picks → attempt activity starts (Temporal)', ...summarize(temporalToAttempt) },
    { stage: 'attempt starts → subscriber has the body', ...summarize(attemptToReceipt) },
  ];
}
