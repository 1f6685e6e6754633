import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { startOutboxRelay } from '../../src/temporal/outbox-relay';
import { type DevServerDeliveryBed, startDevServerDeliveryBed } from '../support/dev-server-delivery';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { insertEndpoint, insertEvent, workflowIdOf } from '../support/webhook-rows';

// What a delivery costs on Temporal Cloud, where Actions are billed and rate-limited per namespace: counted by the
// Temporal server's own `action` metric (the same metering as Cloud's, server 1.22.3 and later) on the dev server,
// for events delivered at their first attempt as the delivery role runs them (eager start from the worker's
// connection). docs/temporal-tls.md#temporal-cloud states this number.

const EVENTS = 3;

let bed: DevServerDeliveryBed;
let metricsUrl: string;

beforeAll(async () => {
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  bed = await startDevServerDeliveryBed({ extraArgs: ['--metrics-port', String(metricsPort)] });
}, 60_000);

afterAll(async () => {
  await bed?.close();
});

/** The server's `action` counters of namespace `default`, by action type. */
async function actionsByType(): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const counts: Record<string, number> = {};
  for (const [, type, value] of text.matchAll(/^action\{action_type="([^"]+)",namespace="default"[^}]*\} (\d+)$/gm)) {
    counts[type] = (counts[type] ?? 0) + Number(value);
  }
  return counts;
}

test(`an event delivered at its first attempt costs three actions: the start, the attempt, the status upsert`, async () => {
  const taskQueue = `actions-${randomUUID()}`;
  const { db, subscriber } = bed;
  const { worker, client } = await bed.workerAndClient(taskQueue);
  expect(Object.values(await actionsByType()).every((count) => count === 0)).toBe(true);
  await worker.runUntil(async () => {
    const endpoint = await insertEndpoint(db, { url: subscriber.url });
    const events = [];
    for (let index = 0; index < EVENTS; index++) events.push(await insertEvent(db, endpoint));
    const relay = startOutboxRelay({ db, client, taskQueue, log: pino({ level: 'silent' }), eagerStart: true });
    try {
      for (const { id } of events) {
        const handle = client.workflow.getHandle(await workflowIdOf(db, id));
        await eventually(async () => (await handle.describe().catch(() => undefined))?.status.name === 'COMPLETED', { what: `event ${id} delivered` });
      }
    } finally {
      await relay.stop();
    }
  });
  // The server's metrics reach its exporter a moment later; every workflow has completed, so nothing else comes.
  const counted = await eventually(
    async () => {
      const actions = await actionsByType();
      return Object.values(actions).reduce((sum, count) => sum + count, 0) >= 3 * EVENTS && actions;
    },
    { what: 'the actions counted' },
  );
  expect(counted).toEqual({
    grpc_StartWorkflowExecution: EVENTS,
    // The attempt is a local activity: its markers of one workflow task are one action.
    command_BatchMarkers: EVENTS,
    command_UpsertWorkflowSearchAttributes: EVENTS,
  });
  expect(subscriber.requests).toHaveLength(EVENTS);
}, 90_000);
