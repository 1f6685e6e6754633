import type { Client } from '@temporalio/client';
import type { EventIdentity } from '../delivery-rules/event-identity';
import { describeDelivery, type ExistingDelivery } from './delivery-identity';

const isOwnRunning = (state: ExistingDelivery) => state.kind === 'own' && state.running;

/** How many workflows are described at once: a purge batch asks about up to a few hundred. */
const DESCRIBE_CONCURRENCY = 20;

/**
 * Which of these events have a running workflow of their own under their workflow id (a delivery answering resend
 * requests, or a resend run). Describing reads the workflow's current state (not the eventually consistent visibility
 * store), so a resend started before the question is seen; a workflow Temporal no longer knows (past the namespace
 * retention) is not running, nor is another event's workflow under the same id.
 */
export async function runningDeliveries(client: Client, events: readonly EventIdentity[]): Promise<number[]> {
  const running: number[] = [];
  for (let start = 0; start < events.length; start += DESCRIBE_CONCURRENCY) {
    const chunk = events.slice(start, start + DESCRIBE_CONCURRENCY);
    const states = await Promise.all(chunk.map((event) => describeDelivery(client, event)));
    running.push(...chunk.filter((_, index) => isOwnRunning(states[index])).map((event) => event.eventId));
  }
  return running;
}
