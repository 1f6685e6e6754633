import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { createMetrics } from '../../src/observability/metrics';
import { createTemporalClient } from '../../src/temporal/client';
import { type DevServerHandle } from '../../src/temporal/dev-server';
import { advanceEventIdsPastTemporal, EventIdsUnchecked } from '../../src/temporal/event-id-floor';
import { relayPendingEvents } from '../../src/temporal/outbox-relay';
import { testDatabases } from '../support/database';
import { freePort } from '../support/free-port';
import { captureLogs } from '../support/log-capture';
import { RETRIES_END_WITH_THE_CONNECTION, startTestDevServer } from '../support/temporal';
import { insertEndpoint, insertEvent } from '../support/webhook-rows';

/*
 * A new, re-created or restored database must not hand out event ids (the envelope's `id`, the `webhook-id` header)
 * that its predecessor already sent: subscribers drop repeats by that id (issue 20, P1). Temporal's visibility lists
 * what was delivered; the dev server's, as `npm start` runs it (SQLite: no ORDER BY).
 */

const log = createLogger('silent');
let server: DevServerHandle;
let client: Client;
const databases = testDatabases();
const workflowIds: string[] = [];

beforeAll(async () => {
  server = await startTestDevServer();
  client = new Client({ connection: await Connection.connect({ address: server.address, plugins: [RETRIES_END_WITH_THE_CONNECTION] }) });
}, 120_000);

afterAll(async () => {
  await Promise.all(workflowIds.map((id) => client.workflow.getHandle(id).terminate('test done').catch(() => undefined)));
  await client?.connection.close();
  await databases.destroyAll();
  await server?.stop();
});

const newDatabase = databases.create;

/** A deployment's events relayed to Temporal on a queue nobody polls: their workflows run on, as in backoff. */
async function relayedEvents(db: Db, count: number, taskQueue = `floor-${randomUUID()}`) {
  const endpointId = await insertEndpoint(db, { url: 'http://127.0.0.1:9/hook' });
  const events = [];
  for (let i = 0; i < count; i += 1) events.push(await insertEvent(db, endpointId));
  expect(await relayPendingEvents({ db, client, taskQueue, log })).toBe(count);
  workflowIds.push(...events.map((event) => event.workflowId));
  return events;
}

/** Visibility is eventually consistent: the check is run once the workflows are listed. */
async function listed(workflowId: string) {
  for (let tries = 0; tries < 100; tries += 1) {
    const found = await client.workflow.count(`WorkflowId = '${workflowId}'`);
    if (found.count > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${workflowId} never listed`);
}

test("a database re-created against a Temporal holding the earlier database's workflows hands out ids above those", async () => {
  const earlier = await relayedEvents(await newDatabase(), 5);
  // Some ended, some running: both lists are read.
  await client.workflow.getHandle(earlier[1].workflowId).terminate('ended before the database was lost');
  await listed(earlier[4].workflowId);

  const db = await newDatabase();
  const logs = captureLogs();
  const metrics = createMetrics();
  expect(await advanceEventIdsPastTemporal({ db, client, log: logs.log, metrics })).toEqual({ before: 0, after: 5 });
  const endpointId = await insertEndpoint(db, { url: 'http://127.0.0.1:9/hook' });
  const fresh = await insertEvent(db, endpointId);
  expect(fresh.id).toBe(6);
  expect(logs.entries()).toContainEqual(expect.objectContaining({ level: 40, highestInTemporal: 5, before: 0, after: 5 }));
  expect(await metrics.registry.getSingleMetricAsString('webhook_event_id_highest_in_temporal')).toContain('webhook_event_id_highest_in_temporal 5');
  expect(await metrics.registry.getSingleMetricAsString('webhook_event_id_sequence_after_check')).toContain('webhook_event_id_sequence_after_check 5');
});

test('a restore from an older backup: the sequence moves past what Temporal delivered since; never backwards', async () => {
  const db = await newDatabase();
  const before = await relayedEvents(db, 3);
  const highest = Math.max(...before.map((event) => event.id));
  await listed(before[2].workflowId);
  // The database is rolled back to a copy taken before those three: its sequence is behind Temporal.
  await db.raw(`SELECT setval(pg_get_serial_sequence('webhook_events', 'id'), 1, false)`);
  await db('webhook_events').delete();
  const checked = await advanceEventIdsPastTemporal({ db, client, log });
  expect(checked!.after).toBeGreaterThanOrEqual(highest);
  const next = await insertEvent(db, await insertEndpoint(db, { url: 'http://127.0.0.1:9/hook' }));
  expect(next.id).toBeGreaterThan(highest);

  // Ahead of Temporal already: left as it is.
  await db.raw(`SELECT setval(pg_get_serial_sequence('webhook_events', 'id'), 100000)`);
  expect(await advanceEventIdsPastTemporal({ db, client, log })).toMatchObject({ before: 100000, after: 100000 });
  expect((await insertEvent(db, await insertEndpoint(db, { url: 'http://127.0.0.1:9/hook' }))).id).toBe(100001);
});

describe('Temporal unreachable at the check', () => {
  const unreachable = async () => createTemporalClient({ address: `127.0.0.1:${await freePort()}`, namespace: 'default' });

  test('a database never checked refuses: its ids would start where a predecessor’s did', async () => {
    const db = await newDatabase();
    const down = await unreachable();
    await expect(advanceEventIdsPastTemporal({ db, client: down, log })).rejects.toThrow(EventIdsUnchecked);
    await expect(advanceEventIdsPastTemporal({ db, client: down, log })).rejects.toThrow(/never checked against it/);
    await down.connection.close();
  }, 60_000);

  test('a database checked before starts with a warning (a restart during a Temporal outage)', async () => {
    const db = await newDatabase();
    await advanceEventIdsPastTemporal({ db, client, log });
    const down = await unreachable();
    const logs = captureLogs();
    expect(await advanceEventIdsPastTemporal({ db, client: down, log: logs.log })).toBeUndefined();
    expect(logs.entries()).toContainEqual(expect.objectContaining({ level: 40, msg: expect.stringContaining('run migrate again once Temporal answers') }));
    await down.connection.close();
  }, 60_000);
});
