import { type DocumentedResponses, documentedResponses } from '../support/documented-responses';
import { seedDonationScenario } from '../support/api-fixtures';
import { basicAuth, STAFF, startTestApp, type TestApp } from '../support/test-app';

const STAFF_BASIC = basicAuth(STAFF.username, STAFF.password);

let app: TestApp;
let documented: DocumentedResponses;

beforeAll(async () => {
  app = await startTestApp();
  await seedDonationScenario(app.db);
  documented = await documentedResponses(app.baseUrl);
});

afterAll(async () => {
  await app?.close();
});

const ROOTS = ['/api/v1', '/api/v2', '/api/v2.1', '/crm-api'];

async function expect400(root: string, resource: string, query: string, code: string, message: string | RegExp) {
  const response = await app.get(`${root}/${resource}?${query}`);
  const body = (await response.json()) as { error: string; code: string };
  expect([query, response.status, body.code]).toEqual([query, 400, code]);
  expect(body.error).toMatch(message);
  expect(documented.errors('get', `${root}/${resource}`, 400, body)).toEqual([]);
}

describe('crm/donations/ parameters', () => {
  test.each(ROOTS)('%s: dateFrom and dateTo are both required, with a message asking for both', async (root) => {
    for (const query of ['', 'dateFrom=03-30-2025', 'dateTo=03-30-2025', 'environment=TEST']) {
      await expect400(root, 'crm/donations/', query, 'missing_parameter', 'Both dateFrom and dateTo are required, in the format MM-DD-YYYY');
    }
  });

  test('dates are strict MM-DD-YYYY real calendar dates, in order', async () => {
    const cases: Array<[string, RegExp]> = [
      ['dateFrom=2025-03-30&dateTo=03-30-2025', /^dateFrom must be a date in the format MM-DD-YYYY$/],
      ['dateFrom=3-30-2025&dateTo=03-30-2025', /^dateFrom must be a date/],
      ['dateFrom=30-03-2025&dateTo=03-30-2025', /^dateFrom is not a real calendar date$/],
      ['dateFrom=03-30-2025&dateTo=02-30-2025', /^dateTo is not a real calendar date$/],
      ['dateFrom=02-29-2025&dateTo=03-01-2025', /^dateFrom is not a real calendar date$/],
      ['dateFrom=03-30-2025&dateTo=03-30-2025x', /^dateTo must be a date/],
      ['dateFrom=03-30-0999&dateTo=03-30-2025', /^dateFrom is not a real calendar date$/],
      ['dateFrom=03-30-2025&dateFrom=03-31-2025&dateTo=04-01-2025', /^dateFrom must be given once/],
      ['dateFrom=03-31-2025&dateTo=03-30-2025', /^dateFrom must not be after dateTo$/],
    ];
    for (const [query, message] of cases) await expect400('/api/v2.1', 'crm/donations/', query, 'invalid_parameter', message);
    const leapDay = await app.get('/api/v2.1/crm/donations/?dateFrom=02-29-2024&dateTo=02-29-2024');
    expect(leapDay.status).toBe(200);
    const widest = await app.get('/api/v1/crm/donations/?dateFrom=01-01-1000&dateTo=12-31-9999');
    expect(widest.status).toBe(200);
    expect(await widest.json()).toHaveLength(8);
  });

  test('environment is TEST or PRODUCTION, exactly', async () => {
    for (const value of ['test', 'Production', 'STAGE', '', 'TEST,PRODUCTION']) {
      await expect400('/api/v1', 'crm/donations/', `dateFrom=03-30-2025&dateTo=03-30-2025&environment=${value}`, 'invalid_parameter', /^environment must be TEST or PRODUCTION$/);
    }
  });

  test('unknown parameters are ignored', async () => {
    const response = await app.get('/api/v1/crm/donations/?dateFrom=03-30-2025&dateTo=03-30-2025&format=xml&limit=1');
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveLength(4);
  });
});

describe('other endpoints', () => {
  test('crm/contact/donations/ needs an integer contactId', async () => {
    await expect400('/api/v2.1', 'crm/contact/donations/', '', 'missing_parameter', /^contactId is required$/);
    for (const value of ['abc', '1.5', '-1', '0', '1e3', '99999999999', '2147483648']) {
      await expect400('/api/v2.1', 'crm/contact/donations/', `contactId=${value}`, 'invalid_parameter', /^contactId must be/);
    }
    await expect400('/api/v1', 'crm/contact/donations/', 'contactId=1&environment=LIVE', 'invalid_parameter', /^environment/);
  });

  test('crm/contacts/ pagination and updatedSince', async () => {
    for (const [query, message] of [
      ['page=0', /^page must be a positive integer$/],
      ['page=abc', /^page must be a positive integer$/],
      ['page_size=1001', /^page_size must be between 1 and 1000$/],
      ['page_size=0', /^page_size must be a positive integer$/],
      // The rule of ids: a leading zero is refused, so that `01` is not a second spelling of 1.
      ['page=01', /^page must be a positive integer$/],
      ['page=00', /^page must be a positive integer$/],
      ['page_size=010', /^page_size must be a positive integer$/],
      ['page=2147483648', /^page must be between 1 and 2147483647$/],
      ['page=1&page=2', /^page must be given once$/],
      ['updatedSince=10/26/2025', /^updatedSince must be a date in the format MM-DD-YYYY$/],
      ['updatedSince=13-01-2025', /^updatedSince is not a real calendar date$/],
    ] as Array<[string, RegExp]>) {
      await expect400('/api/v2', 'crm/contacts/', query, 'invalid_parameter', message);
    }
    const lastPossible = await app.get('/api/v2/crm/contacts/?page=2147483647&page_size=1000');
    expect(lastPossible.status).toBe(404);
  });

  test('crm/newsletter-subscriptions/ dates', async () => {
    await expect400('/api/v2.1', 'crm/newsletter-subscriptions/', 'dateFrom=04-31-2025', 'invalid_parameter', /^dateFrom is not a real calendar date$/);
    await expect400('/api/v2.1', 'crm/newsletter-subscriptions/', 'dateFrom=05-01-2025&dateTo=04-30-2025', 'invalid_parameter', /^dateFrom must not be after dateTo$/);
  });

  test('an unknown path under a root, and a wrong method, are JSON errors', async () => {
    const unknown = await app.get('/api/v2.1/crm/spenden/');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'Not found', code: 'not_found' });
    const post = await app.anonymous.post('/api/v2.1/crm/donations/', {});
    expect(post.status).toBe(405);
    expect(await post.json()).toEqual({ error: expect.any(String), code: 'method_not_allowed' });
  });
});

describe('no input makes a 500', () => {
  const nasty = [
    '%00',
    '%ZZ',
    '%E0%A4%A',
    "'; DROP TABLE donations; --",
    'x'.repeat(5000),
    '12-31-9999',
    '01-01-1000',
    '00-00-0000',
    '99999999999999999999',
    '-0',
    '[]',
    '{}',
    '%F0%9F%92%B8',
    'null',
  ];
  const parametersOf: Record<string, string[]> = {
    'crm/donations/': ['dateFrom', 'dateTo', 'environment'],
    'crm/contact/donations/': ['contactId', 'environment'],
    'crm/contacts/': ['environment', 'updatedSince', 'page', 'page_size'],
    'crm/newsletter-subscriptions/': ['environment', 'dateFrom', 'dateTo', 'page', 'page_size'],
  };
  const validBase: Record<string, string> = {
    'crm/donations/': 'dateFrom=03-30-2025&dateTo=03-30-2025&',
    'crm/contact/donations/': 'contactId=1&',
  };

  test.each(ROOTS)('%s: every parameter of every CRM endpoint, with hostile values', async (root) => {
    for (const [resource, parameters] of Object.entries(parametersOf)) {
      for (const parameter of parameters) {
        for (const value of nasty) {
          const query = `${validBase[resource] ?? ''}${parameter}=${value}`;
          const response = await app.get(`${root}/${resource}?${query}`);
          const body = JSON.parse(await response.text());
          expect([resource, parameter, value, response.status < 500]).toEqual([resource, parameter, value, true]);
          if (response.status >= 400) expect(typeof body.error).toBe('string');
        }
      }
    }
  });

  test('hostile path segments and headers', async () => {
    for (const [path, headers] of [
      ['/api/v2.1/campaign-links/%E0%A4%A/config/', {}],
      ['/api/v2.1/campaign-links/%00/config/', {}],
      ['/api/v2.1/crm/contacts/', { Authorization: 'Bearer ' + 'x'.repeat(10_000) }],
      ['/api/v2.1/crm/contacts/?page_size=1', { Authorization: STAFF_BASIC, 'X-Forwarded-Host': '[kaputt' }],
      ['/api/v2.1/crm/newsletter-subscriptions/', { Authorization: STAFF_BASIC, 'X-Forwarded-Host': 'a b' }],
      ['/api/v2.1/crm/contacts/', { Authorization: `Basic ${Buffer.from('\u0000:\u0000').toString('base64')}` }],
      ['/api/v2.1/crm/contacts/', { Authorization: `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0xc3]).toString('base64')}` }],
    ] as Array<[string, Record<string, string>]>) {
      const response = await fetch(`${app.baseUrl}${path}`, { headers });
      expect([path, response.status < 500]).toEqual([path, true]);
      const body = (await response.json()) as { error?: unknown };
      if (response.status >= 400) expect(typeof body.error).toBe('string');
    }
  });
});
