import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy, type ScheduleUpdateOptions } from '@temporalio/client';
import {
  RETENTION_SCHEDULE_ID,
  RETENTION_SCHEDULE_TIME,
  type RetentionPolicy,
  retentionDetails,
  retentionSummary,
} from '../delivery-rules/retention';
import { purgeEndedEvents } from '../../workflows';

/** Each run's id: the schedule appends the time it fired (`webhook-retention-purge-2025-07-16T01:15:00Z`). */
const PURGE_WORKFLOW_ID = 'webhook-retention-purge';

/** The schedule as this version of the service wants it, for the policy of its configuration. */
function retentionSchedule(taskQueue: string, policy: RetentionPolicy): Omit<ScheduleUpdateOptions, 'state'> {
  const { hour, minute, timezone } = RETENTION_SCHEDULE_TIME;
  return {
    spec: { calendars: [{ hour, minute }], timezone },
    action: {
      type: 'startWorkflow',
      workflowType: purgeEndedEvents,
      workflowId: PURGE_WORKFLOW_ID,
      taskQueue,
      args: [{ eventRetentionDays: policy.eventRetentionDays, payloadRetentionDays: policy.payloadRetentionDays }],
      staticSummary: retentionSummary(policy),
      staticDetails: retentionDetails(policy),
    },
    // A purge still running at the next night (a huge backlog) is not joined by a second one; a night missed
    // while Temporal was down is made up within a day.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  };
}

/**
 * Creates the nightly retention schedule (Temporal UI → Schedules → `webhook-retention`), or brings an existing one
 * to this configuration: idempotent, so every worker calls it when it starts, and the last one started sets the
 * retention days. A pause (or note) an operator set in Temporal UI is kept.
 */
export async function ensureRetentionSchedule(client: Client, taskQueue: string, policy: RetentionPolicy): Promise<'created' | 'updated'> {
  const wanted = retentionSchedule(taskQueue, policy);
  try {
    await client.schedule.create({ scheduleId: RETENTION_SCHEDULE_ID, ...wanted });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(RETENTION_SCHEDULE_ID).update((current) => ({ ...wanted, state: current.state }));
  return 'updated';
}
