import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/knex';
import { RETENTION_SCHEDULE_ID } from '../../src/delivery-rules/retention';
import { ensureRetentionSchedule } from '../../src/temporal/retention-schedule';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { type ConnectedDevServer, startConnectedTestDevServer } from '../support/temporal';
import { eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';
import { bundleDeliveryWorkflows, createTestWorker } from '../support/delivery';

// The schedule on the dev server `npm start` runs (the time-skipping test server cannot run schedules): created
// idempotently by every worker start, visible under Schedules, and when it fires it purges.

const DAY_MS = 24 * 60 * 60 * 1000;

let temporal: ConnectedDevServer;
let db: Db;

beforeAll(async () => {
  temporal = await startConnectedTestDevServer();
  ({ db } = await createTestDatabase());
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await temporal?.close();
});

test('every worker start creates or updates the one nightly schedule; a pause set in Temporal UI is kept; when it fires, it purges', async () => {
  const taskQueue = `retention-${randomUUID()}`;
  const policy = { eventRetentionDays: 90, payloadRetentionDays: 30 };
  // Two workers starting at once: one creates it, the other updates it to the same; a later start updates again.
  expect((await Promise.all([1, 2].map(() => ensureRetentionSchedule(temporal.client, taskQueue, policy)))).sort()).toEqual(['created', 'updated']);
  expect(await ensureRetentionSchedule(temporal.client, taskQueue, policy)).toBe('updated');

  const handle = temporal.client.schedule.getHandle(RETENTION_SCHEDULE_ID);
  const described = await handle.describe();
  expect(described.spec.calendars).toEqual([
    expect.objectContaining({ hour: [{ start: 3, end: 3, step: 1 }], minute: [{ start: 15, end: 15, step: 1 }], second: [{ start: 0, end: 0, step: 1 }] }),
  ]);
  expect(described.spec.timezone).toBe('Europe/Zurich');
  expect(described.action).toMatchObject({
    type: 'startWorkflow',
    workflowType: 'purgeEndedEvents',
    workflowId: 'webhook-retention-purge',
    taskQueue,
    args: [{ eventRetentionDays: 90, payloadRetentionDays: 30 }],
    staticSummary: 'Retention: delete ended webhook events after 90 days, payloads after 30 days',
  });
  expect(described.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: DAY_MS });
  // The next run is at 03:15 in Zurich.
  const [next] = described.info.nextActionTimes;
  expect(new Intl.DateTimeFormat('de-CH', { timeZone: 'Europe/Zurich', hour: '2-digit', minute: '2-digit' }).format(next)).toBe('03:15');

  // Listed where Temporal UI shows schedules.
  const listed: string[] = [];
  for await (const schedule of temporal.client.schedule.list()) listed.push(schedule.scheduleId);
  expect(listed).toEqual([RETENTION_SCHEDULE_ID]);

  // An operator pauses it in Temporal UI; a worker started with other limits changes them and keeps the pause.
  await handle.pause('paused by an operator');
  expect(await ensureRetentionSchedule(temporal.client, taskQueue, { eventRetentionDays: 60, payloadRetentionDays: 60 })).toBe('updated');
  const changed = await handle.describe();
  expect(changed.state).toMatchObject({ paused: true, note: 'paused by an operator' });
  expect(changed.action.args).toEqual([{ eventRetentionDays: 60, payloadRetentionDays: 60 }]);
  expect(changed.action.staticSummary).toBe('Retention: delete ended webhook events after 60 days');

  // Fired now (Temporal UI: "Trigger"), the purge runs on the worker and deletes what is due.
  const endpointId = await insertEndpoint(db, { url: 'http://127.0.0.1:9/hooks' });
  const [due, kept] = [await insertEvent(db, endpointId), await insertEvent(db, endpointId)];
  await db('webhook_events').where({ id: due.id }).update({ status: 'delivered', created_at: new Date(Date.now() - 61 * DAY_MS) });
  await db('webhook_events').where({ id: kept.id }).update({ status: 'delivered', created_at: new Date(Date.now() - 59 * DAY_MS) });
  const worker = await createTestWorker({
    connection: temporal.nativeConnection,
    taskQueue,
    workflowBundle: await bundleDeliveryWorkflows(),
    db,
    keyring: TEST_KEYRING,
  });
  await worker.runUntil(async () => {
    await handle.trigger();
    const run = await eventually(async () => (await handle.describe()).info.recentActions[0]?.action, { what: 'the triggered purge' });
    expect(run.workflow.workflowId).toMatch(/^webhook-retention-purge-/);
    const result = await temporal.client.workflow.getHandle(run.workflow.workflowId, run.workflow.firstExecutionRunId).result();
    expect(result).toEqual({ deletedEvents: 1, deletedAttempts: 0, droppedPayloads: 0, passedOver: 0 });
  });
  expect(await eventRow(db, due.id)).toBeUndefined();
  expect(await eventRow(db, kept.id)).toMatchObject({ status: 'delivered' });
  await handle.delete();
});
