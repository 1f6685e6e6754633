import { ANNA, CLAIRE, insertCheckout, insertContact, seedDonationScenario } from '../support/api-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { useDonationScenarioApp } from '../support/donation-scenario-app';
import { presentedDonor } from '../support/platform-donor';
import { rawExchange } from '../support/raw-http';

const given = useDonationScenarioApp();

interface Contact {
  id: number;
  statistics: { donation_count: number; first_donation_at: string | null; last_donation_at: string | null; totals: unknown[] };
  [field: string]: unknown;
}
interface Page {
  count: number;
  next: string | null;
  previous: string | null;
  results: Contact[];
}

async function page(root: string, query = ''): Promise<Page> {
  const response = await given.app.get(`${root}/crm/contacts/${query}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as Page;
  expect(given.documented.errors('get', `${root}/crm/contacts/`, 200, body)).toEqual([]);
  return body;
}

const byId = (body: Page, id: number) => body.results.find((contact) => contact.id === id)!;

describe('GET crm/contacts/', () => {
  test('v1 counts every position, Swiss local times, totals per currency', async () => {
    const body = await page('/api/v1');
    expect(body.count).toBe(3);
    expect(body.results.map((contact) => contact.id)).toEqual([
      given.scenario.contacts.anna,
      given.scenario.contacts.luca,
      given.scenario.contacts.claire,
    ]);
    expect(byId(body, given.scenario.contacts.anna)).toEqual({
      id: given.scenario.contacts.anna,
      ...presentedDonor(ANNA),
      created_at: '2024-11-02T10:00:00+01:00',
      statistics: {
        donation_count: 4,
        first_donation_at: '2025-03-30T00:30:00+01:00',
        last_donation_at: '2025-03-30T12:15:00+02:00',
        totals: [{ currency: 'CHF', amount: 115.75 }],
      },
    });
    expect(byId(body, given.scenario.contacts.claire).statistics.totals).toEqual([
      { currency: 'CHF', amount: 20 },
      { currency: 'EUR', amount: 75 },
    ]);
  });

  test('v2 adds custom_fields; v2.1 counts a multi-checkout once and answers in UTC', async () => {
    const v2 = byId(await page('/api/v2'), given.scenario.contacts.anna);
    expect(v2.custom_fields).toEqual({ 'Anrede im Brief': 'Liebe Anna', 'Spendenbestätigung per Post': true });
    expect(v2.statistics.donation_count).toBe(4);

    const v21 = byId(await page('/api/v2.1'), given.scenario.contacts.anna);
    expect(v21.statistics).toEqual({
      donation_count: 2,
      first_donation_at: '2025-03-29T23:30:00Z',
      last_donation_at: '2025-03-30T10:15:00Z',
      totals: [{ currency: 'CHF', amount: 115.75 }],
    });
    expect(v21.created_at).toBe('2024-11-02T09:00:00Z');
    expect(byId(await page('/api/v2.1'), given.scenario.contacts.luca).statistics.donation_count).toBe(2);
  });

  test('/crm-api answers as v1', async () => {
    expect(await page('/crm-api')).toEqual(await page('/api/v1'));
  });

  test('environment PRODUCTION lists the live contacts', async () => {
    const body = await page('/api/v2.1', '?environment=PRODUCTION');
    expect(body.results.map((contact) => [contact.id, contact.statistics.donation_count])).toEqual([
      [given.scenario.contacts.annaLive, 1],
      [given.scenario.contacts.marcoLive, 1],
    ]);
  });

  test('pages with absolute links that keep the other parameters; past the end is a 404', async () => {
    const first = await page('/api/v2.1', '?page_size=2&environment=TEST');
    expect(first.count).toBe(3);
    expect(first.results).toHaveLength(2);
    expect(first.previous).toBeNull();
    expect(first.next).toBe(`${given.app.linkOrigin}/api/v2.1/crm/contacts/?page_size=2&environment=TEST&page=2`);

    const secondResponse = await given.app.get(new URL(first.next!).pathname + new URL(first.next!).search);
    const second = (await secondResponse.json()) as Page;
    expect(second.results.map((contact) => contact.id)).toEqual([given.scenario.contacts.claire]);
    expect(second.next).toBeNull();
    expect(second.previous).toBe(`${given.app.linkOrigin}/api/v2.1/crm/contacts/?page_size=2&environment=TEST&page=1`);

    const past = await given.app.get('/api/v2.1/crm/contacts/?page_size=2&page=3');
    expect(past.status).toBe(404);
    const error = await past.json();
    expect(error).toEqual({ error: 'Page not found', code: 'page_not_found' });
    expect(given.documented.errors('get', '/api/v2.1/crm/contacts/', 404, error)).toEqual([]);
  });

  describe('links are built from PUBLIC_URL, never from the Host or X-Forwarded-Host a client sends', () => {
    const path = '/api/v1/crm/contacts/?page_size=1';
    const nextOf = async (app: TestApp, target: string, headerLines: string) => {
      const auth = app.staff().Authorization;
      const answer = await rawExchange(app.baseUrl, `GET ${target} HTTP/1.1\r\n${headerLines}Authorization: ${auth}\r\nConnection: close\r\n\r\n`);
      expect(answer.status).toBe(200);
      return (JSON.parse(answer.body) as Page).next;
    };
    const foreign = [
      'Host: evil.invalid\r\n',
      'Host: spenden.example.ch:8443\r\n',
      'Host: user@evil.example\r\n',
      'Host: 127.0.0.1\r\nX-Forwarded-Host: evil.invalid\r\nX-Forwarded-Proto: https\r\n',
    ];

    test.each(foreign)('without PUBLIC_URL, the address the start command prints: %j', async (headerLines) => {
      const origin = given.app.linkOrigin;
      expect(origin).toMatch(/^http:\/\/localhost:[0-9]+$/);
      expect(await nextOf(given.app, path, headerLines)).toBe(`${origin}/api/v1/crm/contacts/?page_size=1&page=2`);
      // An absolute-form target names a host of its own (RFC 9112 §3.2.2), which is no more believed; nor is a fragment kept.
      expect(await nextOf(given.app, `http://evil.invalid${path}#frag`, headerLines)).toBe(`${origin}/api/v1/crm/contacts/?page_size=1&page=2`);
    });

    test('with PUBLIC_URL, its origin, also behind a trusted proxy that forwards another host', async () => {
      const app = await startTestApp({ PUBLIC_URL: 'https://spenden.example.ch', TRUST_PROXY: '127.0.0.1' });
      try {
        await seedDonationScenario(app.db);
        for (const headerLines of foreign) {
          expect(await nextOf(app, path, headerLines)).toBe('https://spenden.example.ch/api/v1/crm/contacts/?page_size=1&page=2');
        }
      } finally {
        await app.close();
      }
    });
  });

  test('updatedSince keeps contacts changed on or after that Swiss day', async () => {
    const autumn = await page('/api/v1', '?updatedSince=10-26-2025');
    expect(autumn.results.map((contact) => contact.id)).toEqual([given.scenario.contacts.luca]);
    const spring = await page('/api/v1', '?updatedSince=03-30-2025');
    expect(spring.count).toBe(3);
    const later = await page('/api/v1', '?updatedSince=10-27-2025');
    expect(later).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  test('statistics come from a fixed number of queries, however many contacts are on the page', async () => {
    const queriesFor = async (path: string) => {
      const seen: string[] = [];
      const listener = (query: { sql: string }) => seen.push(query.sql);
      given.app.db.on('query', listener);
      try {
        const response = await given.app.get(path);
        expect(response.status).toBe(200);
        return { count: seen.length, body: (await response.json()) as Page };
      } finally {
        given.app.db.off('query', listener);
      }
    };
    const before = await queriesFor('/api/v2.1/crm/contacts/?page_size=1000');
    for (let i = 0; i < 25; i += 1) {
      const contactId = await insertContact(given.app.db, 'TEST', { ...CLAIRE, email: `spender${i}@example.ch` });
      await insertCheckout(given.app.db, {
        contactId,
        environment: 'TEST',
        createdAt: '2025-05-01T10:00:00Z',
        positions: [{ amountMinor: 1000 }, { amountMinor: 500 }],
      });
    }
    const after = await queriesFor('/api/v2.1/crm/contacts/?page_size=1000');
    expect(after.body.results).toHaveLength(28);
    expect(after.body.results.at(-1)!.statistics).toMatchObject({ donation_count: 1, totals: [{ currency: 'CHF', amount: 15 }] });
    expect(after.count).toBe(before.count);
    expect(after.count).toBeLessThanOrEqual(3);
  });
});
