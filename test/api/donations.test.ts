import { ANNA, QR_REFERENCE } from '../support/api-fixtures';
import { useDonationScenarioApp } from '../support/donation-scenario-app';
import { presentedDonor } from '../support/platform-donor';

const given = useDonationScenarioApp();

type Entry = Record<string, unknown> & { id: string; created_at: string };

async function list(root: string, query: string): Promise<Entry[]> {
  const response = await given.app.get(`${root}/crm/donations/?${query}`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as Entry[];
  expect(given.documented.errors('get', `${root}/crm/donations/`, 200, body)).toEqual([]);
  return body;
}

const annaDonor = presentedDonor(ANNA);

describe('GET crm/donations/', () => {
  test('v1: one entry per position, Swiss local time across the spring change, no later fields', async () => {
    const entries = await list('/api/v1', 'dateFrom=03-30-2025&dateTo=03-30-2025');
    const { annaSingle, annaMulti } = given.scenario.checkouts;
    expect(entries.map((entry) => entry.id)).toEqual([annaSingle.number, ...annaMulti.positions]);
    expect(entries[0]).toEqual({
      id: annaSingle.number,
      created_at: '2025-03-30T00:30:00+01:00',
      environment: 'TEST',
      payment_type: 'single',
      amount: 50,
      currency: 'CHF',
      campaign: { id: given.scenario.campaigns.bergwald, title: 'Bergwaldprojekt 2025' },
      purpose: 'Aufforstung Graubünden',
      contact_id: given.scenario.contacts.anna,
      donor: annaDonor,
      payment: { transaction_id: annaSingle.transactionId, method: 'TWI', status: 'completed' },
      invoice: null,
      recurring: null,
    });
    expect(entries[1].created_at).toBe('2025-03-30T12:15:00+02:00');
    expect(entries.slice(1).map((entry) => entry.amount)).toEqual([30, 20.5, 15.25]);
    expect(entries[3].campaign).toEqual({ id: given.scenario.campaigns.trinkwasser, title: 'Trinkwasser für Nepal' });
    expect(entries[3].purpose).toBeNull();
  });

  test('v2 adds custom_fields ({} when the form had none) and keeps local time', async () => {
    const entries = await list('/api/v2', 'dateFrom=03-30-2025&dateTo=03-30-2025');
    expect(entries[0].custom_fields).toEqual(ANNA.custom_fields);
    expect(entries[1].custom_fields).toEqual({});
    expect(entries[0].created_at).toBe('2025-03-30T00:30:00+01:00');
    expect(entries.every((entry) => !('checkout' in entry))).toBe(true);
  });

  test('v2.1 adds checkout on every entry and answers in UTC', async () => {
    const entries = await list('/api/v2.1', 'dateFrom=03-30-2025&dateTo=03-30-2025');
    const { annaSingle, annaMulti } = given.scenario.checkouts;
    expect(entries.map((entry) => [entry.id, entry.created_at, entry.checkout])).toEqual([
      [annaSingle.number, '2025-03-29T23:30:00Z', { number: annaSingle.number, total_amount: 50, currency: 'CHF' }],
      ...annaMulti.positions.map((number) => [
        number,
        '2025-03-30T10:15:00Z',
        { number: annaMulti.number, total_amount: 65.75, currency: 'CHF' },
      ]),
    ]);
    expect(entries[0].custom_fields).toEqual(ANNA.custom_fields);
  });

  test('the autumn change: the 25-hour day, and the same local 02:30 twice with different offsets', async () => {
    const { lucaInit, lucaInterval, claireLate, claireNextDay } = given.scenario.checkouts;
    const v1 = await list('/api/v1', 'dateFrom=10-26-2025&dateTo=10-26-2025');
    expect(v1.map((entry) => [entry.id, entry.created_at])).toEqual([
      [lucaInit.number, '2025-10-26T02:30:00+02:00'],
      [lucaInterval.number, '2025-10-26T02:30:00+01:00'],
      [claireLate.number, '2025-10-26T23:30:00+01:00'],
    ]);
    const v21 = await list('/api/v2.1', 'dateFrom=10-26-2025&dateTo=10-26-2025');
    expect(v21.map((entry) => entry.created_at)).toEqual([
      '2025-10-26T00:30:00Z',
      '2025-10-26T01:30:00Z',
      '2025-10-26T22:30:00Z',
    ]);
    const nextDay = await list('/api/v1', 'dateFrom=10-27-2025&dateTo=10-27-2025');
    expect(nextDay.map((entry) => [entry.id, entry.created_at])).toEqual([
      [claireNextDay.number, '2025-10-27T00:00:00+01:00'],
    ]);
  });

  test('recurring QR invoice donations carry the reference, the pending status and the recurring donation', async () => {
    const [init, interval] = await list('/api/v2', 'dateFrom=10-26-2025&dateTo=10-26-2025');
    expect(init).toMatchObject({
      payment_type: 'recurring_init',
      payment: { method: 'INV', status: 'pending' },
      invoice: QR_REFERENCE,
      recurring: { id: given.scenario.recurring.luca, interval: 'monthly' },
      donor: { company: 'Rossi Costruzioni SA', po_box: 'Casella postale 214', language: 'it' },
    });
    expect(interval.payment_type).toBe('recurring_interval');
  });

  test('a period is whole days, both ends inclusive, other currencies as they are', async () => {
    const entries = await list('/api/v1', 'dateFrom=03-01-2025&dateTo=10-27-2025');
    expect(entries).toHaveLength(8);
    expect(entries.find((entry) => entry.id === given.scenario.checkouts.claireLate.number)).toMatchObject({
      amount: 75,
      currency: 'EUR',
      payment: { method: 'PAP' },
    });
    expect(await list('/api/v1', 'dateFrom=03-31-2025&dateTo=10-25-2025')).toEqual([]);
  });

  test('environment PRODUCTION lists live donations only; TEST is the default', async () => {
    const live = await list('/api/v2.1', 'dateFrom=01-01-2025&dateTo=12-31-2025&environment=PRODUCTION');
    const { annaLiveGift, marcoCrowdfunding } = given.scenario.checkouts;
    expect(live.map((entry) => [entry.id, entry.environment, entry.payment_type])).toEqual([
      [annaLiveGift.number, 'PRODUCTION', 'single'],
      [marcoCrowdfunding.number, 'PRODUCTION', 'crowdfunding'],
    ]);
    const test = await list('/api/v2.1', 'dateFrom=01-01-2025&dateTo=12-31-2025');
    const explicit = await list('/api/v2.1', 'dateFrom=01-01-2025&dateTo=12-31-2025&environment=TEST');
    expect(test).toEqual(explicit);
    expect(test.every((entry) => entry.environment === 'TEST')).toBe(true);
  });

  test('/crm-api answers exactly as /api/v1', async () => {
    const query = 'dateFrom=01-01-2025&dateTo=12-31-2025';
    const alias = await list('/crm-api', query);
    expect(alias).toEqual(await list('/api/v1', query));
    expect(alias).toHaveLength(8);
  });

  test('without its trailing slash, a GET is redirected (308) to the documented path, and a client that follows it gets its answer', async () => {
    const query = 'dateFrom=03-30-2025&dateTo=03-30-2025';
    const { baseUrl } = given.app;
    const redirect = await fetch(`${baseUrl}/api/v2.1/crm/donations?${query}`, { headers: given.app.staff(), redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([308, `/api/v2.1/crm/donations/?${query}`]);
    const followed = await given.app.get(`/api/v2.1/crm/donations?${query}`);
    expect([followed.status, followed.url]).toEqual([200, `${baseUrl}/api/v2.1/crm/donations/?${query}`]);
    expect(await followed.json()).toEqual(await list('/api/v2.1', query));
    // Only GET and HEAD: another method would send its body twice.
    const post = await given.app.post(`/api/v2.1/crm/donations?${query}`, {});
    expect([post.status, await post.json()]).toEqual([404, { error: 'Not found; the documented path is /api/v2.1/crm/donations/', code: 'not_found' }]);
  });
});
