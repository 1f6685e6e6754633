import http from 'node:http';
import { donorSnapshotOf, insertContact, LUCA } from '../support/api-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
// About 28 MB of JSON: far more than the socket buffers between server and client can hold.
const ROWS = 40_000;

beforeAll(async () => {
  app = await startTestApp();
  const contactId = await insertContact(app.db, 'TEST', LUCA);
  // One busy day: a donation every second from midnight (Swiss summer time) on 06-01-2025.
  await app.db.raw(
    `INSERT INTO checkouts (number, environment, contact_id, donor, currency, total_amount_minor, transaction_id,
                            payment_method, payment_status, created_at)
     SELECT (2000000 + g)::text, 'TEST', ?, ?::jsonb, 'CHF', 1000 + g % 500, 'bulk_' || g, 'TWI', 'completed',
            timestamptz '2025-06-01 00:00:00+02' + g * interval '1 second'
     FROM generate_series(1, ?) AS g`,
    [contactId, await donorSnapshotOf(app.db, contactId), ROWS],
  );
  await app.db.raw(
    `INSERT INTO donations (number, checkout_id, position, environment, contact_id, created_at, amount_minor, payment_type)
     SELECT number, id, 1, environment, contact_id, created_at, total_amount_minor, 'single' FROM checkouts`,
  );
});

afterAll(async () => {
  await app?.close();
});

const PATH = '/api/v2.1/crm/donations/?dateFrom=06-01-2025&dateTo=06-01-2025';

/** The app's streaming query as Postgres sees it, if it is still running. */
async function openStreamingQuery(): Promise<{ state: string } | undefined> {
  const { rows } = await app.db.raw(
    `SELECT state FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'select "d"."number"%'
       AND state <> 'idle'`,
  );
  return rows[0];
}

function request(): Promise<http.IncomingMessage & { req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${app.baseUrl}${PATH}`, { headers: app.staff() }, (res) =>
      resolve(Object.assign(res, { req })),
    );
    req.on('error', reject);
  });
}

const firstChunk = (res: http.IncomingMessage) =>
  new Promise<Buffer>((resolve) => res.once('data', (chunk: Buffer) => { res.pause(); resolve(chunk); }));

test('rows are sent while the query still runs, paced by the client, and all arrive in order', async () => {
  const res = await request();
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['content-length']).toBeUndefined();
  const chunks = [await firstChunk(res)];
  // The client has bytes but is not reading: the server must be waiting with its cursor open, not done.
  expect(await openStreamingQuery()).toBeDefined();
  expect(chunks[0].toString('utf8', 0, 1)).toBe('[');

  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => res.once('end', resolve));
  res.resume();
  await ended;
  const entries = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<{ id: string; created_at: string }>;
  expect(entries).toHaveLength(ROWS);
  expect(entries[0]).toMatchObject({ id: '2000001', created_at: '2025-05-31T22:00:01Z' });
  expect(entries.at(-1)).toMatchObject({ id: String(2000000 + ROWS) });
  expect(entries.every((entry, index) => index === 0 || entries[index - 1].created_at <= entry.created_at)).toBe(true);
  expect(await openStreamingQuery()).toBeUndefined();
});

test('a client that goes away mid-stream ends the query and frees its connection', async () => {
  const res = await request();
  await firstChunk(res);
  expect(await openStreamingQuery()).toBeDefined();
  res.req.destroy();
  // Polls until the server has noticed the closed socket: bounded, and done as soon as the cursor is closed.
  for (let attempt = 0; attempt < 200 && (await openStreamingQuery()); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(await openStreamingQuery()).toBeUndefined();
  expect(app.db.client.pool.numUsed()).toBe(0);
});

test('HEAD answers with the headers and closes the cursor at once', async () => {
  const response = await app.send('HEAD', PATH);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await openStreamingQuery()).toBeUndefined();
  expect(app.db.client.pool.numUsed()).toBe(0);
});
