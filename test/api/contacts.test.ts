import { ANNA, CLAIRE, insertCheckout, insertContact, seedDonationScenario } from '../support/api-fixtures';
import { startTestApp } from '../support/test-app';
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
    expect(first.next).toBe(`${given.app.baseUrl}/api/v2.1/crm/contacts/?page_size=2&environment=TEST&page=2`);

    const secondResponse = await given.app.get(new URL(first.next!).pathname + new URL(first.next!).search);
    const second = (await secondResponse.json()) as Page;
    expect(second.results.map((contact) => contact.id)).toEqual([given.scenario.contacts.claire]);
    expect(second.next).toBeNull();
    expect(second.previous).toBe(`${given.app.baseUrl}/api/v2.1/crm/contacts/?page_size=2&environment=TEST&page=1`);

    const past = await given.app.get('/api/v2.1/crm/contacts/?page_size=2&page=3');
    expect(past.status).toBe(404);
    const error = await past.json();
    expect(error).toEqual({ error: 'Page not found', code: 'page_not_found' });
    expect(given.documented.errors('get', '/api/v2.1/crm/contacts/', 404, error)).toEqual([]);
  });

  test('links follow the host and scheme the client used: X-Forwarded-* only from a trusted proxy', async () => {
    const forwarded = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'spenden.example.ch' };
    const direct = await given.app.get('/api/v1/crm/contacts/?page_size=1', { ...given.app.staff(), ...forwarded });
    expect(((await direct.json()) as Page).next).toBe(`${given.app.baseUrl}/api/v1/crm/contacts/?page_size=1&page=2`);
    const behindProxy = await startTestApp({ TRUST_PROXY: '1' });
    try {
      await seedDonationScenario(behindProxy.db);
      const response = await behindProxy.get('/api/v1/crm/contacts/?page_size=1', { ...behindProxy.staff(), ...forwarded });
      expect(response.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      expect(((await response.json()) as Page).next).toBe('https://spenden.example.ch/api/v1/crm/contacts/?page_size=1&page=2');
    } finally {
      await behindProxy.close();
    }
    expect(direct.headers.get('strict-transport-security')).toBeNull();
  });

  describe('the links’ host comes from a Host header only when it is a valid host[:port]', () => {
    const path = '/api/v1/crm/contacts/?page_size=1';
    const nextOf = async (target: string, hostLines: string) => {
      const auth = given.app.staff().Authorization;
      const answer = await rawExchange(
        given.app.baseUrl,
        `GET ${target} HTTP/1.1\r\n${hostLines}Authorization: ${auth}\r\nConnection: close\r\n\r\n`,
      );
      expect(answer.status).toBe(200);
      return (JSON.parse(answer.body) as Page).next;
    };

    test.each([
      ['spenden.example.ch', 'http://spenden.example.ch'],
      ['spenden.example.ch.:8443', 'http://spenden.example.ch.:8443'],
      ['Spenden.Example.CH:65535', 'http://spenden.example.ch:65535'],
      ['api_1:3000', 'http://api_1:3000'],
      ['192.0.2.7:1', 'http://192.0.2.7:1'],
      ['[::1]:3000', 'http://[::1]:3000'],
      ['[2001:db8::7]', 'http://[2001:db8::7]'],
    ])('Host: %s is used', async (host, origin) => {
      expect(await nextOf(path, `Host: ${host}\r\n`)).toBe(`${origin}/api/v1/crm/contacts/?page_size=1&page=2`);
    });

    test.each([
      '',
      'evil.example/x?',
      'evil.example#',
      'user@evil.example',
      'user:pw@evil.example',
      'evil.example\\x',
      'evil.example:0',
      'evil.example:65536',
      'evil.example:080',
      'evil.example:',
      'evil.example:80:80',
      'evil example',
      'evil.example, other.example',
      '-evil.example',
      'evil..example',
      'evil.example%2F',
      '[::1',
      '[fe80::1%25eth0]',
      '[evil.example]',
      '999.0.0.1',
      '1.2.3.4.5',
    ])('Host: %j falls back to http://localhost', async (host) => {
      expect(await nextOf(path, `Host: ${host}\r\n`)).toBe('http://localhost/api/v1/crm/contacts/?page_size=1&page=2');
    });

    test('an absolute-form target names the host (RFC 9112 §3.2.2), under the same rule; a fragment is dropped', async () => {
      const target = (authority: string) => `http://${authority}/api/v1/crm/contacts/?page_size=1`;
      expect(await nextOf(target('other.example:8080'), 'Host: spenden.example.ch\r\n')).toBe(
        'http://other.example:8080/api/v1/crm/contacts/?page_size=1&page=2',
      );
      expect(await nextOf(target('user@evil.example'), 'Host: spenden.example.ch\r\n')).toBe(
        'http://localhost/api/v1/crm/contacts/?page_size=1&page=2',
      );
      expect(await nextOf(`${path}#frag`, 'Host: spenden.example.ch\r\n')).toBe(
        'http://spenden.example.ch/api/v1/crm/contacts/?page_size=1&page=2',
      );
    });

    test('X-Forwarded-Host from a trusted proxy is held to the same rule', async () => {
      const behindProxy = await startTestApp({ TRUST_PROXY: '1' });
      try {
        await seedDonationScenario(behindProxy.db);
        const next = async (forwardedHost: string) => {
          const response = await behindProxy.get(path, { ...behindProxy.staff(), 'X-Forwarded-Host': forwardedHost });
          return ((await response.json()) as Page).next;
        };
        expect(await next('spenden.example.ch, proxy.internal')).toBe('http://spenden.example.ch/api/v1/crm/contacts/?page_size=1&page=2');
        expect(await next('evil.example/x?')).toBe('http://localhost/api/v1/crm/contacts/?page_size=1&page=2');
      } finally {
        await behindProxy.close();
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
