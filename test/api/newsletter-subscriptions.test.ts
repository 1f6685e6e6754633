import { type DocumentedResponses, documentedResponses } from '../support/documented-responses';
import { ANNA, insertContact, MARCO } from '../support/api-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let documented: DocumentedResponses;
const ids: Record<string, number> = {};
const contacts: Record<string, number> = {};

async function insertSubscription(row: Record<string, unknown>): Promise<number> {
  const [{ id }] = await app.db('newsletter_subscriptions').insert(row).returning('id');
  return id;
}

beforeAll(async () => {
  app = await startTestApp();
  documented = await documentedResponses(app.baseUrl);
  contacts.anna = await insertContact(app.db, 'TEST', ANNA);
  contacts.marco = await insertContact(app.db, 'PRODUCTION', MARCO);
  // Signed up with a nickname; the contact's own data wins, what it lacks comes from the sign-up.
  ids.anna = await insertSubscription({
    contact_id: contacts.anna,
    gender: '',
    first_name: 'Änni',
    last_name: null,
    email: 'aenni@example.ch',
    language: 'fr',
    channel: 'donation_form',
    created_at: '2025-03-30T10:16:00Z',
    confirmed_at: '2025-03-30T10:20:00Z',
  });
  ids.sophie = await insertSubscription({
    gender: '',
    first_name: 'Sophie',
    last_name: null,
    email: 'sophie.keller@example.ch',
    language: 'de',
    channel: 'newsletter_form',
    created_at: '2025-10-25T20:00:00Z',
    confirmed_at: '2025-10-26T01:30:00Z',
  });
  ids.unconfirmed = await insertSubscription({
    email: 'noch.nicht@example.ch',
    language: 'de',
    created_at: '2025-10-26T09:00:00Z',
  });
  ids.marco = await insertSubscription({
    contact_id: contacts.marco,
    email: 'marco.keller@example.ch',
    language: 'de',
    created_at: '2025-07-15T10:31:00Z',
    confirmed_at: '2025-07-15T10:45:00Z',
  });
});

afterAll(async () => {
  await app?.close();
});

interface Page {
  count: number;
  next: string | null;
  previous: string | null;
  results: Array<Record<string, unknown>>;
}

async function page(root: string, query = ''): Promise<Page> {
  const response = await app.get(`${root}/crm/newsletter-subscriptions/${query}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as Page;
  expect(documented.errors('get', `${root}/crm/newsletter-subscriptions/`, 200, body)).toEqual([]);
  return body;
}

describe('GET crm/newsletter-subscriptions/', () => {
  test('v2.1: confirmed sign-ups shaped like the webhook object, contact data first, UTC', async () => {
    expect(await page('/api/v2.1')).toEqual({
      count: 1,
      next: null,
      previous: null,
      results: [
        {
          subscription_id: ids.anna,
          contact_id: contacts.anna,
          gender: 'female',
          first_name: 'Anna',
          last_name: 'Muster',
          email: 'anna.muster@example.ch',
          language: 'de',
          opt_in: true,
          opt_in_date: '2025-03-30T10:20:00Z',
        },
      ],
    });
    // Without a contact the sign-up speaks for itself.
    expect((await page('/api/v2.1', '?environment=PRODUCTION')).results[1]).toEqual({
      subscription_id: ids.sophie,
      contact_id: null,
      gender: '',
      first_name: 'Sophie',
      last_name: null,
      email: 'sophie.keller@example.ch',
      language: 'de',
      opt_in: true,
      opt_in_date: '2025-10-26T01:30:00Z',
    });
  });

  test('v1, v2 and /crm-api show the confirmation in Swiss local time', async () => {
    for (const root of ['/api/v1', '/api/v2', '/crm-api']) {
      expect((await page(root)).results.map((entry) => entry.opt_in_date)).toEqual(['2025-03-30T12:20:00+02:00']);
      expect((await page(root, '?environment=PRODUCTION')).results.map((entry) => entry.opt_in_date)).toEqual([
        '2025-07-15T12:45:00+02:00',
        '2025-10-26T02:30:00+01:00',
      ]);
    }
  });

  test('every sign-up is listed in one environment: its contact\'s, or PRODUCTION when it has none', async () => {
    const listed = async (query: string) => (await page('/api/v2.1', query)).results.map((entry) => entry.subscription_id);
    expect(await listed('?environment=TEST')).toEqual([ids.anna]);
    expect(await listed('?environment=PRODUCTION')).toEqual([ids.marco, ids.sophie]);
  });

  test('dateFrom and dateTo filter on the Swiss day of confirmation, each on its own', async () => {
    const ids_ = async (query: string) => (await page('/api/v2.1', query)).results.map((entry) => entry.subscription_id);
    expect(await ids_('?environment=PRODUCTION&dateFrom=10-26-2025')).toEqual([ids.sophie]);
    expect(await ids_('?environment=PRODUCTION&dateTo=10-25-2025')).toEqual([ids.marco]);
    expect(await ids_('?dateTo=10-25-2025')).toEqual([ids.anna]);
    expect(await ids_('?dateFrom=03-30-2025&dateTo=03-30-2025')).toEqual([ids.anna]);
    expect(await ids_('?dateFrom=03-31-2025&dateTo=10-25-2025')).toEqual([]);
  });

  test('pagination as on contacts', async () => {
    const first = await page('/api/v2.1', '?environment=PRODUCTION&page_size=1');
    expect(first.count).toBe(2);
    expect(first.next).toBe(`${app.linkOrigin}/api/v2.1/crm/newsletter-subscriptions/?environment=PRODUCTION&page_size=1&page=2`);
    expect((await app.get('/api/v2.1/crm/newsletter-subscriptions/?environment=PRODUCTION&page_size=1&page=3')).status).toBe(404);
  });
});
