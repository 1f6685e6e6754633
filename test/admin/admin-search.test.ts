import { PLATFORM_DONOR } from '../support/platform-donor';
import { documentedResponses } from '../support/documented-responses';
import { startTestApp, type TestApp } from '../support/test-app';
import { insertEvent } from '../support/webhook-rows';

// Finding events on the admin API: by transaction id, donation/checkout/order number and e-mail, in a created range,
// combined with the status and type filters. Events come from real platform calls (the outbox path) and rows.

let app: TestApp;
let water: number;
const ids: Record<string, number> = {};

beforeAll(async () => {
  app = await startTestApp();
  [{ id: water }] = await app.db('campaigns').insert([{ title: 'Wasser für alle' }]).returning('id');
  expect((await app.request('PUT', '/admin/api/webhook-endpoint', { url: 'https://crm.example.org/hooks', payload_version: 'v2.1' })).status).toBe(200);
  const checkout = (transactionId: string, email: string, amounts: number[]) =>
    app.request('POST', '/platform/checkouts', {
      environment: 'PRODUCTION',
      currency: 'CHF',
      donor: { ...PLATFORM_DONOR, email },
      positions: amounts.map((amount) => ({ amount, campaign_id: water, purpose: null })),
      payment: { transaction_id: transactionId, method: 'TWI', status: 'completed' },
    });
  app.clock.now = Date.parse('2025-07-15T08:00:00Z') / 1000;
  const multi = await checkout('twint-multi-1', 'Anna.Muster@Example.CH', [50, 25.5]);
  expect(multi.status).toBe(201);
  app.clock.now = Date.parse('2025-07-16T08:00:00Z') / 1000;
  const single = await checkout('twint-single-2', 'luca@example.org', [20]);
  expect(single.status).toBe(201);
  const byTransaction = async (transactionId: string) =>
    (await app.db('webhook_events').where({ transaction_id: transactionId }).first('id')).id as number;
  ids.multi = await byTransaction('twint-multi-1');
  ids.single = await byTransaction('twint-single-2');
  ids.multiNumber = multi.body.number;
  ids.secondPosition = multi.body.donations[1].number;
  const [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
  ids.row = (await insertEvent(app.db, endpointId, { transactionId: 'pi_row' })).id;
  await app.db('webhook_events').where({ id: ids.row }).update({ created_at: new Date('2025-07-17T08:00:00Z'), status: 'failed' });
});

afterAll(async () => {
  await app?.close();
});

const found = async (query: string) => {
  const response = await app.request('GET', `/admin/api/webhook-events?${query}`);
  expect([query, response.status]).toEqual([query, 200]);
  return (response.body.results as Array<{ id: number }>).map((event) => event.id);
};

test('by transaction id, exactly', async () => {
  expect(await found('transaction_id=twint-multi-1')).toEqual([ids.multi]);
  expect(await found('transaction_id=pi_row')).toEqual([ids.row]);
  expect(await found('transaction_id=twint-multi')).toEqual([]);
  expect(await found('transaction_id=TWINT-MULTI-1')).toEqual([]);
});

test('by donation or checkout number: a position’s number finds the checkout’s v2.1 event', async () => {
  expect(await found(`reference=${ids.multiNumber}`)).toEqual([ids.multi]);
  expect(await found(`reference=${ids.secondPosition}`)).toEqual([ids.multi]);
  expect(await found('reference=100234')).toEqual([ids.row]);
  expect(await found('reference=999999999')).toEqual([]);
});

test('by e-mail, without regard to case', async () => {
  // The row's stored event is Anna's too (the test rows' donor), the newest of the two.
  expect(await found('email=anna.muster%40example.ch')).toEqual([ids.row, ids.multi]);
  expect(await found('email=ANNA.MUSTER%40EXAMPLE.CH')).toEqual([ids.row, ids.multi]);
  expect(await found('email=luca%40example.org')).toEqual([ids.single]);
  expect(await found('email=anna')).toEqual([]);
});

test('in a created range (from inclusive, to exclusive, any offset), combined with the other filters', async () => {
  expect(await found('created_from=2025-07-16T00:00:00Z')).toEqual([ids.row, ids.single]);
  expect(await found('created_from=2025-07-16T08:00:00Z&created_to=2025-07-17T08:00:00Z')).toEqual([ids.single]);
  expect(await found('created_to=2025-07-16T10:00%2B02:00')).toEqual([ids.multi]);
  expect(await found('created_from=2025-07-15T00:00:00Z&status=failed')).toEqual([ids.row]);
  expect(await found('created_from=2025-07-15T00:00:00Z&email=luca%40example.org&event=donation.completed')).toEqual([ids.single]);
  expect(await found('created_from=2025-07-15T00:00:00Z&email=luca%40example.org&status=failed')).toEqual([]);
  const page = await app.request('GET', '/admin/api/webhook-events?created_from=2025-07-15T00:00:00Z&page_size=2');
  expect(page.body).toMatchObject({ count: 3, next: expect.stringContaining('created_from=2025-07-15T00%3A00%3A00Z') });
  const documented = await documentedResponses(app.baseUrl);
  expect(documented.errors('get', '/admin/api/webhook-events', 200, page.body)).toEqual([]);
});

test('malformed searches are 400s naming the parameter, never 500s', async () => {
  const cases: Array<[string, string]> = [
    ['created_from=2025-07-15', 'created_from'],
    ['created_from=2025-07-15T08:00:00', 'created_from'],
    ['created_from=2025-02-30T08:00:00Z', 'created_from'],
    ['created_to=yesterday', 'created_to'],
    ['created_from=2025-07-16T00:00:00Z&created_to=2025-07-15T00:00:00Z', 'created_to'],
    ['created_from=2025-07-16T00:00:00Z&created_to=2025-07-16T00:00:00Z', 'created_to'],
    ['created_from=0001-01-01T00:00:00Z', 'created_from'],
    ['transaction_id=', 'transaction_id'],
    [`transaction_id=${'x'.repeat(201)}`, 'transaction_id'],
    ['transaction_id=a&transaction_id=b', 'transaction_id'],
    ['email=', 'email'],
    ['reference=a&reference=b', 'reference'],
  ];
  for (const [query, name] of cases) {
    const response = await app.request('GET', `/admin/api/webhook-events?${query}`);
    expect([query, response.status, response.body.code, response.body.problems?.[0]?.name]).toEqual([query, 400, 'invalid_parameter', name]);
  }
  // Whatever the text, it is a value in a query, never SQL.
  for (const value of ["' OR 1=1 --", '%', '_', '\\', '{a,b}', '"}', '\u0000x']) {
    for (const name of ['transaction_id', 'reference', 'email']) {
      const response = await app.request('GET', `/admin/api/webhook-events?${name}=${encodeURIComponent(value)}`);
      expect([name, value, response.status === 200 || response.status === 400]).toEqual([name, value, true]);
      if (response.status === 200) expect(response.body.count).toBe(0);
    }
  }
});
