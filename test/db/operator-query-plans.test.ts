import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { projectRoot } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { listEvents } from '../../src/webhook-events/admin-queries';
import { attemptStatistics } from '../../src/webhook-events/attempt-statistics';
import { readFailingStreak, readLastFailure } from '../../src/webhook-events/failing-streak';
import { countRecoverableEvents, listRecoverableEventIds } from '../../src/webhook-events/recoverable-events';
import { deleteEndedEvents, dropEndedPayloads } from '../../src/webhook-events/retention-batches';
import { createTestDatabase } from '../support/database';
import { insertEndpoint } from '../support/webhook-rows';

/*
 * The operators' queries (search, recovery, retention, health) as the event store runs them, EXPLAINed on a table of
 * 60,000 events over 200 days with 75,000 attempts and 120,000 numbers: each must use its index (migration 014), never scan the table.
 * The plans are written to test-results/query-plans.txt (docs/admin.md quotes them).
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const EVENTS = 60_000;
const now = new Date('2025-07-16T01:15:00Z');

let db: Db;
const report: string[] = [];

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  const endpointId = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
  // Event n: created n * 200 days / EVENTS before now; 2 % failed, 3 % at max retries, the rest delivered; the oldest
  // half with their payload dropped already.
  await db.raw(
    `INSERT INTO webhook_events (endpoint_id, event_type, payload_version, source_key, payload, status, attempts, created_at,
                                 workflow_started_at, transaction_id, donor_email, payload_dropped_at)
     SELECT ?, (ARRAY['donation.completed','donation.reconciled','shop_order.completed'])[1 + n % 3], 'v2.1', 'plan:' || n, '{}',
            CASE WHEN n % 50 = 0 THEN 'failed' WHEN n % 33 = 0 THEN 'max_retries_reached' ELSE 'delivered' END,
            1, ?::timestamptz - n * interval '${(200 * DAY_MS) / EVENTS} milliseconds', now(),
            'tx-' || n, 'donor-' || n || '@example.org',
            CASE WHEN n > ${EVENTS * 0.75} THEN now() END
     FROM generate_series(1, ${EVENTS}) AS n`,
    [endpointId, now],
  );
  // Each event about two numbers (a checkout and its second position, say).
  await db.raw(
    `INSERT INTO webhook_event_references (reference, event_id)
     SELECT (1000000 + id)::text, id FROM webhook_events UNION ALL SELECT (2000000 + id)::text, id FROM webhook_events`,
  );
  await db.raw(
    `INSERT INTO webhook_delivery_attempts (event_id, number, started_at, duration_ms, response_code, outcome)
     SELECT id, 1, created_at, 20 + id % 200, CASE WHEN status = 'delivered' THEN 200 ELSE 500 END,
            CASE WHEN status = 'delivered' THEN 'delivered' ELSE 'failed' END
     FROM webhook_events
     UNION ALL
     SELECT id, 2, created_at + interval '5 minutes', 30, 500, 'failed' FROM webhook_events WHERE id % 4 = 0`,
  );
  await db.raw('ANALYZE webhook_events');
  await db.raw('ANALYZE webhook_delivery_attempts');
  await db.raw('ANALYZE webhook_event_references');
}, 120_000);

afterAll(async () => {
  await mkdir(path.join(projectRoot, 'test-results'), { recursive: true });
  await writeFile(path.join(projectRoot, 'test-results', 'query-plans.txt'), report.join('\n'));
  await db?.destroy();
});

interface Captured {
  sql: string;
  bindings: unknown[];
}

/** The SELECT statements `run` sends, each with its plan (EXPLAIN without executing it). */
async function plansOf(what: string, run: () => Promise<unknown>): Promise<string[]> {
  const captured: Captured[] = [];
  const listener = (query: { sql: string; bindings?: unknown[] }) => {
    if (/^\s*select/i.test(query.sql)) captured.push({ sql: query.sql, bindings: query.bindings ?? [] });
  };
  db.on('query', listener);
  try {
    await run();
  } finally {
    db.removeListener('query', listener);
  }
  const connection = await db.client.acquireConnection();
  try {
    const plans: string[] = [];
    for (const { sql, bindings } of captured) {
      const { rows } = await connection.query(`EXPLAIN ${sql}`, bindings);
      const plan = rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
      plans.push(plan);
      report.push(`-- ${what}\n${sql}\n${plan}\n`);
    }
    return plans;
  } finally {
    await db.client.releaseConnection(connection);
  }
}

const noTableScan = (plan: string) => expect(plan).not.toMatch(/Seq Scan on webhook_(events|delivery_attempts)/);
const page = { limit: 20, offset: 0 };

test.each([
  ['transaction id', { transactionId: 'tx-4242' }, 'webhook_events_transaction_id_idx'],
  ['e-mail', { email: 'Donor-4242@Example.org' }, 'webhook_events_donor_email_idx'],
  ['donation, checkout or order number', { reference: '2004242' }, 'webhook_event_references_pkey'],
  ['one day created', { createdFrom: new Date('2025-05-01T00:00:00Z'), createdTo: new Date('2025-05-02T00:00:00Z') }, 'webhook_events_created_at_idx'],
  ['e-mail in a created range', { email: 'donor-4242@example.org', createdFrom: new Date('2025-01-01T00:00:00Z') }, 'webhook_events_donor_email_idx'],
])('the search by %s uses its index, for the count and the page', async (what, filters, index) => {
  const plans = await plansOf(`search by ${what}`, () => listEvents(db, filters, page));
  expect(plans).toHaveLength(2);
  for (const plan of plans) {
    expect(plan).toContain(index);
    noTableScan(plan);
  }
  expect((await listEvents(db, filters, page)).count).toBe(what === 'one day created' ? 300 : 1);
});

test('a recovery counts and lists its events by status and created range through indexes', async () => {
  const filter = { createdFrom: new Date('2025-05-01T00:00:00Z'), createdTo: new Date('2025-05-08T00:00:00Z'), eventTypes: [] };
  const plans = await plansOf('recovery', async () => {
    await countRecoverableEvents(db, filter);
    await listRecoverableEventIds(db, filter, 0, 100);
    await listRecoverableEventIds(db, { ...filter, eventTypes: ['donation.completed'] }, 0, 100);
  });
  expect(plans).toHaveLength(3);
  for (const plan of plans) {
    expect(plan).toMatch(/Index Scan on webhook_events_/);
    noTableScan(plan);
  }
});

test('the retention purge walks the oldest due events by index: all of them to delete, those with a payload to drop it', async () => {
  const batch = { createdBefore: new Date(now.getTime() - 90 * DAY_MS), limit: 500, passedOver: [], runningAmong: async () => [] };
  const [deleting] = await plansOf('retention: delete ended events (one batch)', () => deleteEndedEvents(db, batch));
  expect(deleting).toContain('webhook_events_created_at_idx');
  noTableScan(deleting);
  const [dropping] = await plansOf('retention: drop payloads (one batch)', () =>
    dropEndedPayloads(db, { ...batch, createdBefore: new Date(now.getTime() - 30 * DAY_MS) }),
  );
  expect(dropping).toContain('webhook_events_payload_kept_idx');
  noTableScan(dropping);
});

test('the health view reads the attempts of the last 7 days and the last success by index', async () => {
  const plans = await plansOf('health (7 days)', () => attemptStatistics(db, new Date(now.getTime() - 7 * DAY_MS), now));
  expect(plans).toHaveLength(3);
  for (const plan of plans) noTableScan(plan);
  expect(plans[0]).toContain('webhook_delivery_attempts_started_at_idx');
  expect(plans[1]).toContain('webhook_delivery_attempts_started_at_idx');
  expect(plans[2]).toContain('webhook_delivery_attempts_delivered_idx');
});

test("the failing endpoint's streak (read on every scrape) and its last failure are index probes", async () => {
  const [streak] = await plansOf('endpoint failing: streak', () => readFailingStreak(db));
  expect(streak).toContain('webhook_delivery_attempts_delivered_idx');
  expect(streak).toContain('webhook_delivery_attempts_started_at_idx');
  noTableScan(streak);
  const [lastFailure] = await plansOf('endpoint failing: last failure', () => readLastFailure(db, new Date(now.getTime() - DAY_MS)));
  expect(lastFailure).toContain('Index Scan Backward using webhook_delivery_attempts_started_at_idx');
  noTableScan(lastFailure);
});
