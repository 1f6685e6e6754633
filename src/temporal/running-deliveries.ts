import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { deliveryWorkflowId } from './delivery-workflows';

/** How many workflows are described at once: a purge batch asks about up to a few hundred. */
const DESCRIBE_CONCURRENCY = 20;

/**
 * Which of these events have a running workflow under their id (a delivery answering resend requests, or a resend
 * run). Describing reads the workflow's current state (not the eventually consistent visibility store), so a resend
 * started before the question is seen; a workflow Temporal no longer knows (past the namespace retention) is not running.
 */
export async function runningDeliveries(client: Client, eventIds: readonly number[]): Promise<number[]> {
  const running: number[] = [];
  for (let start = 0; start < eventIds.length; start += DESCRIBE_CONCURRENCY) {
    const chunk = eventIds.slice(start, start + DESCRIBE_CONCURRENCY);
    const states = await Promise.all(
      chunk.map(async (eventId) => {
        try {
          return (await client.workflow.getHandle(deliveryWorkflowId(eventId)).describe()).status.name === 'RUNNING';
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return false;
          throw err;
        }
      }),
    );
    running.push(...chunk.filter((_, index) => states[index]));
  }
  return running;
}
