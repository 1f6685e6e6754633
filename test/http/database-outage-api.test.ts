import { createDb, type Db } from '../../src/db/knex';
import { eventually } from '../support/eventually';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { PLATFORM_DONOR } from '../support/platform-donor';
import { basicAuth, STAFF, startTestApp, type TestApp } from '../support/test-app';

/*
 * The API while its database is unreachable: a 503 with Retry-After that tells callers to try again (not a 500 that
 * reads as a bug), and a platform call cut in the middle of its transaction leaves nothing behind, so that the
 * retry writes everything exactly once.
 */

let app: TestApp;
/** The test's own connection; the app's goes through the proxy. */
let direct: Db;
let proxy: TcpProxy;

beforeAll(async () => {
  app = await startTestApp({}, {
    async connect(databaseUrl) {
      const viaProxy = new URL(databaseUrl);
      proxy = await startTcpProxy({ host: viaProxy.hostname, port: Number(viaProxy.port) });
      viaProxy.port = String(proxy.port);
      return createDb({ connectionString: viaProxy.toString() });
    },
  });
  direct = app.db;
  await direct('webhook_endpoints').insert({
    platform: 'default',
    url: 'https://crm.example.org/hooks',
    active: true,
    payload_version: 'v1',
    events: ['donation.completed'],
  });
});
afterAll(async () => {
  await app?.close();
  await proxy?.close();
});

const checkout = (transactionId: string) => ({
  environment: 'PRODUCTION',
  currency: 'CHF',
  donor: { ...PLATFORM_DONOR, email: `${transactionId}@example.org`, newsletter: false },
  positions: [{ amount: 30 }, { amount: 20 }],
  payment: { transaction_id: transactionId, method: 'TWI' },
});

async function written(transactionId: string) {
  const checkouts = await direct('checkouts').where({ transaction_id: transactionId });
  const contacts = await direct('contacts').where({ email: `${transactionId}@example.org` });
  const events = await direct('webhook_events').where('source_key', 'like', 'donation.completed:%');
  return { checkouts: checkouts.length, contacts: contacts.length, events: events.length };
}

test('while Postgres is unreachable: 503 with Retry-After on every kind of route, and nothing written', async () => {
  await proxy.cut();
  try {
    for (const [path, init] of [
      ['/healthz', {}],
      ['/api/v2.1/crm/contacts/', { headers: app.staff() }],
      ['/api/v2.1/crm/contacts/', { headers: { Authorization: basicAuth(STAFF.username, STAFF.password) } }],
      ['/platform/checkouts', { method: 'POST', headers: { ...app.staff(), 'Content-Type': 'application/json' }, body: JSON.stringify(checkout('down-1')) }],
      ['/authentication/create', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(STAFF) }],
    ] as const) {
      const response = await fetch(`${app.baseUrl}${path}`, init as RequestInit);
      expect([path, response.status, response.headers.get('retry-after')]).toEqual([path, 503, '5']);
      expect(await response.json()).toEqual({ error: 'The database is not reachable; try again shortly', code: 'service_unavailable' });
    }
  } finally {
    await proxy.restore();
  }
  expect(await written('down-1')).toMatchObject({ checkouts: 0, contacts: 0 });
  expect((await app.post('/platform/checkouts', checkout('down-1'))).status).toBe(201);
  expect(await written('down-1')).toEqual({ checkouts: 1, contacts: 1, events: 2 });
});

test('a platform call cut in the middle of its transaction leaves nothing half-written; the retry writes it once', async () => {
  const eventsBefore = (await written('cut-1')).events;
  // Hold the call inside its transaction: contact, checkout and donations are inserted, its events wait for this lock.
  const blocker = await direct.transaction();
  await blocker.raw('LOCK TABLE webhook_events IN EXCLUSIVE MODE');
  const pending = app.post('/platform/checkouts', checkout('cut-1'));
  await eventually(
    async () =>
      (await direct.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE 'WITH inserted AS (%INSERT INTO webhook_events%'`)).rows[0].n === 1,
    { what: 'the checkout to wait for the webhook_events lock' },
  );
  await proxy.cut();
  await blocker.rollback();
  const response = await pending;
  expect(response.status).toBe(503);
  await proxy.restore();
  // The server side of the cut connection notices the missing commit and rolls back.
  await eventually(async () => (await direct.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'WITH inserted AS (%INSERT INTO webhook_events%'`)).rows[0].n === 0, {
    what: 'the cut transaction to end',
  });
  expect(await written('cut-1')).toEqual({ checkouts: 0, contacts: 0, events: eventsBefore });

  expect((await app.post('/platform/checkouts', checkout('cut-1'))).status).toBe(201);
  expect((await app.post('/platform/checkouts', checkout('cut-1'))).status).toBe(200);
  expect(await written('cut-1')).toEqual({ checkouts: 1, contacts: 1, events: eventsBefore + 2 });
});

test('a database that refuses new connections (ALLOW_CONNECTIONS false, as while a backup is copied) is a 503 too', async () => {
  const name = (await direct.raw('SELECT current_database() AS name')).rows[0].name as string;
  const admin = createDb({ connectionString: app.databaseUrl.replace(`/${name}`, '/postgres'), pool: { max: 1 } });
  try {
    await admin.raw(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    // The app's sessions are cut (the first calls find them dead); its new connections are refused by the server
    // as they start (FATAL 55000).
    await admin.raw(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()`, [name]);
    for (let call = 0; call < 4; call += 1) {
      const response = await app.post('/platform/checkouts', checkout('refused-1'));
      expect([call, response.status, ((await response.json()) as { code: string }).code]).toEqual([call, 503, 'service_unavailable']);
    }
  } finally {
    await admin.raw(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await admin.destroy();
  }
  expect((await app.post('/platform/checkouts', checkout('refused-1'))).status).toBe(201);
});
