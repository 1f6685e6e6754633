import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { bundleDeliveryWorkflows, createTestWorker, type DeliveryTestBed, spawnWorkerProcess, startDelivery, startDeliveryTestBed } from '../support/delivery';
import { documentedResponses } from '../support/documented-responses';
import { eventually } from '../support/eventually';
import { insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

/*
 * An attempt whose worker dies (kill -9) between its POST and the write of its outcome: the attempt log keeps a row
 * for every request the subscriber received, the lost one shown as interrupted, outcome unknown (admin API over
 * HTTP), and Temporal's repeat of the attempt is the same attempt of the five, not the next one.
 */

let bed: DeliveryTestBed;
let subscriber: Subscriber;
let releaseFirst: () => void;
const processes: ChildProcess[] = [];

beforeAll(async () => {
  bed = await startDeliveryTestBed('interrupted');
  const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
  // Every request fails; the first is held until its worker is dead.
  subscriber = await startSubscriber({
    now: () => bed.env.currentTimeMs(),
    reply: async (request) => {
      if (request.index === 0) await firstHeld;
      return { status: 503, body: 'unavailable' };
    },
  });
}, 120_000);

afterAll(async () => {
  for (const child of processes) child.kill('SIGKILL');
  await subscriber?.close();
  await bed?.close();
});

test('a worker killed between the POST and its outcome leaves an interrupted attempt; the retry records its own, and five attempts with an outcome still follow', async () => {
  const { db } = bed.app;
  const taskQueue = `interrupted-${randomUUID()}`;
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
  const lost = spawnWorkerProcess(bed, taskQueue);
  processes.push(lost);
  await startDelivery(db, bed.client, taskQueue, event.id);
  await subscriber.waitForRequests(1);
  lost.kill('SIGKILL');
  releaseFirst();

  const worker = await createTestWorker({ connection: bed.env.nativeConnection, taskQueue, workflowBundle: await bundleDeliveryWorkflows(), db, keyring: TEST_KEYRING });
  const handle = bed.env.client.workflow.getHandle(event.workflowId);
  expect(await worker.runUntil(handle.result())).toBe('max_retries_reached');

  // Six requests: the lost one, then scheduled attempts 1 to 5 (1 again, as Temporal ran it again).
  expect(subscriber.requests).toHaveLength(6);
  const documented = await documentedResponses(bed.app.baseUrl);
  const detail = await bed.app.request('GET', `/admin/api/webhook-events/${event.id}`);
  expect(detail.status).toBe(200);
  expect(documented.errors('get', '/admin/api/webhook-events/{id}', 200, detail.body)).toEqual([]);
  expect(detail.body).toMatchObject({ status: 'max_retries_reached', attempts: 5, interrupted_attempts: 1 });
  const unknown = { outcome: null, duration_ms: null, response_code: null, response_body: null, error: null, interrupted: true };
  const failed = { outcome: 'failed', response_code: 503, interrupted: false };
  expect(detail.body.delivery_attempts).toMatchObject([
    { number: 1, manual: false, ...unknown },
    { number: 1, ...failed },
    { number: 2, ...failed },
    { number: 3, ...failed },
    { number: 4, ...failed },
    { number: 5, ...failed },
  ]);
  expect(detail.body.delivery_attempts).toHaveLength(subscriber.requests.length);

  const list = await bed.app.request('GET', '/admin/api/webhook-events');
  expect(documented.errors('get', '/admin/api/webhook-events', 200, list.body)).toEqual([]);
  expect(list.body.results.find((row: { id: number }) => row.id === event.id)).toMatchObject({ attempts: 5, interrupted_attempts: 1 });

  // Temporal UI counts what the workflow numbered: the five attempts with an outcome.
  const { typedSearchAttributes } = await handle.describe();
  expect(typedSearchAttributes.getAll().find(({ key }) => key.name === 'WebhookAttempts')?.value).toBe(5);
  await eventually(async () => lost.exitCode !== null || lost.signalCode !== null, { what: 'the killed worker gone' });
}, 180_000);
