import { useDonationScenarioApp } from '../support/donation-scenario-app';

const given = useDonationScenarioApp();

type Entry = Record<string, unknown> & { id: string };

async function donationsOf(root: string, contactId: number, extra = ''): Promise<Entry[]> {
  const response = await given.app.get(`${root}/crm/contact/donations/?contactId=${contactId}${extra}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as Entry[];
  expect(given.documented.errors('get', `${root}/crm/contact/donations/`, 200, body)).toEqual([]);
  return body;
}

describe('GET crm/contact/donations/', () => {
  test('before v2.1 every position of a multi-checkout is its own donation', async () => {
    const { annaSingle, annaMulti } = given.scenario.checkouts;
    for (const root of ['/api/v1', '/api/v2', '/crm-api']) {
      const entries = await donationsOf(root, given.scenario.contacts.anna);
      expect(entries.map((entry) => [entry.id, entry.amount])).toEqual([
        [annaSingle.number, 50],
        [annaMulti.positions[0], 30],
        [annaMulti.positions[1], 20.5],
        [annaMulti.positions[2], 15.25],
      ]);
      expect(entries.every((entry) => !('positions' in entry) && !('checkout' in entry))).toBe(true);
      expect(entries[1].created_at).toBe('2025-03-30T12:15:00+02:00');
    }
    const [v1] = await donationsOf('/api/v1', given.scenario.contacts.anna);
    const [v2] = await donationsOf('/api/v2', given.scenario.contacts.anna);
    expect('custom_fields' in v1).toBe(false);
    expect(v2.custom_fields).toEqual({ 'Anrede im Brief': 'Liebe Anna', 'Spendenbestätigung per Post': true });
  });

  test('v2.1 shows a multi-checkout as one entry with the total and its positions', async () => {
    const { annaSingle, annaMulti } = given.scenario.checkouts;
    const { bergwald, nothilfe, trinkwasser } = given.scenario.campaigns;
    const [single, multi] = await donationsOf('/api/v2.1', given.scenario.contacts.anna);
    expect(single).toMatchObject({
      id: annaSingle.number,
      amount: 50,
      campaign: { id: bergwald, title: 'Bergwaldprojekt 2025' },
      purpose: 'Aufforstung Graubünden',
      positions: [
        {
          id: annaSingle.number,
          amount: 50,
          campaign: { id: bergwald, title: 'Bergwaldprojekt 2025' },
          purpose: 'Aufforstung Graubünden',
          payment_method: 'TWI',
        },
      ],
    });
    expect(multi).toEqual({
      id: annaMulti.number,
      created_at: '2025-03-30T10:15:00Z',
      environment: 'TEST',
      payment_type: 'single',
      amount: 65.75,
      currency: 'CHF',
      campaign: null,
      purpose: null,
      contact_id: given.scenario.contacts.anna,
      donor: expect.objectContaining({ first_name: 'Anna', city: 'Zürich' }),
      payment: { transaction_id: annaMulti.transactionId, method: 'VIS', status: 'completed' },
      invoice: null,
      recurring: null,
      custom_fields: {},
      positions: [
        { id: annaMulti.positions[0], amount: 30, campaign: { id: bergwald, title: 'Bergwaldprojekt 2025' }, purpose: 'Aufforstung Graubünden', payment_method: 'VIS' },
        { id: annaMulti.positions[1], amount: 20.5, campaign: { id: nothilfe, title: 'Nothilfe Ukraine' }, purpose: 'Winterhilfe', payment_method: 'VIS' },
        { id: annaMulti.positions[2], amount: 15.25, campaign: { id: trinkwasser, title: 'Trinkwasser für Nepal' }, purpose: null, payment_method: 'VIS' },
      ],
    });
  });

  test('a contact of the other environment, or no such contact, is a 404', async () => {
    for (const path of [
      `/api/v2.1/crm/contact/donations/?contactId=${given.scenario.contacts.annaLive}`,
      `/api/v1/crm/contact/donations/?contactId=${given.scenario.contacts.anna}&environment=PRODUCTION`,
      '/api/v1/crm/contact/donations/?contactId=999999',
    ]) {
      const response = await given.app.get(path);
      expect(response.status).toBe(404);
      const body = await response.json();
      expect(body).toEqual({ error: 'Contact not found', code: 'not_found' });
      expect(given.documented.errors('get', '/api/v1/crm/contact/donations/', 404, body)).toEqual([]);
    }
  });

  test('live contacts with environment=PRODUCTION', async () => {
    const entries = await donationsOf('/api/v2.1', given.scenario.contacts.annaLive, '&environment=PRODUCTION');
    expect(entries.map((entry) => [entry.id, entry.amount, entry.environment])).toEqual([
      [given.scenario.checkouts.annaLiveGift.number, 250, 'PRODUCTION'],
    ]);
  });

  test('a contact without donations has an empty list', async () => {
    const [{ id }] = await given.app.db('contacts')
      .insert({
        environment: 'TEST',
        gender: 'female',
        first_name: 'Sophie',
        last_name: 'Keller',
        email: 'sophie.keller@example.ch',
        street: 'Seestrasse',
        street_number: '1',
        postal_code: '6003',
        city: 'Luzern',
        country: 'CH',
        language: 'de',
      })
      .returning('id');
    expect(await donationsOf('/api/v2.1', id)).toEqual([]);
  });
});
