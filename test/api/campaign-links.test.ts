import { type DocumentedResponses, documentedResponses } from '../support/documented-responses';
import { insertCampaign, insertCampaignLinks } from '../support/api-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let documented: DocumentedResponses;
let campaignId: number;

beforeAll(async () => {
  app = await startTestApp();
  documented = await documentedResponses(app.baseUrl);
  campaignId = await insertCampaign(app.db, 'Bergwaldprojekt 2025');
  await insertCampaignLinks(app.db, campaignId, [
    {
      id: 'bergwald-2025',
      amounts_minor: [2000, 5000, 10000, 25050],
      default_amount_minor: 5000,
      minimum_amount_minor: 500,
      payment_methods: ['TWI', 'VIS', 'ECA', 'PFC', 'PEF', 'INV'],
      purposes: ['Aufforstung Graubünden', 'Schutzwald Uri'],
      recurring_enabled: true,
      recurring_intervals: ['monthly', 'yearly'],
      custom_fields: JSON.stringify([
        { name: 'anrede_brief', type: 'text', label: 'Anrede im Dankesbrief', required: false },
        { name: 'quittung_post', type: 'checkbox', label: 'Spendenbestätigung per Post', required: true },
      ]),
      cover_fees: true,
    },
    { id: 'sammlung-2019', active: false },
  ]);
});

afterAll(async () => {
  await app?.close();
});

const expected = () => ({
  id: 'bergwald-2025',
  campaign: { id: campaignId, title: 'Bergwaldprojekt 2025' },
  active: true,
  currency: 'CHF',
  amounts: [20, 50, 100, 250.5],
  default_amount: 50,
  minimum_amount: 5,
  payment_methods: ['TWI', 'VIS', 'ECA', 'PFC', 'PEF', 'INV'],
  purposes: ['Aufforstung Graubünden', 'Schutzwald Uri'],
  recurring: { enabled: true, intervals: ['monthly', 'yearly'] },
  custom_fields: [
    { name: 'anrede_brief', type: 'text', label: 'Anrede im Dankesbrief', required: false },
    { name: 'quittung_post', type: 'checkbox', label: 'Spendenbestätigung per Post', required: true },
  ],
  cover_fees: true,
});

describe('GET campaign-links/<id>/config/', () => {
  test.each(['/api/v1', '/api/v2', '/api/v2.1', '/crm-api'])(
    '%s: no authentication, any origin, cacheable, the same body in every version',
    async (root) => {
      const response = await fetch(`${app.baseUrl}${root}/campaign-links/bergwald-2025/config/`, {
        headers: { Origin: 'https://www.bergwald.example.ch' },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('cache-control')).toBe('public, max-age=60');
      const body = await response.json();
      expect(body).toEqual(expected());
      expect(documented.errors('get', `${root}/campaign-links/{id}/config/`, 200, body)).toEqual([]);
    },
  );

  test('unknown, inactive and impossible ids are a 404 that pages of other origins can read', async () => {
    for (const id of ['gibt-es-nicht', 'sammlung-2019', '%00', 'a%2Fb', 'x'.repeat(300), '%C3%A4%E2%82%AC']) {
      const response = await fetch(`${app.baseUrl}/api/v2.1/campaign-links/${id}/config/`);
      expect(response.status).toBe(404);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      const body = await response.json();
      expect(body).toEqual({ error: 'Campaign link not found', code: 'campaign_link_not_found' });
      expect(documented.errors('get', '/api/v2.1/campaign-links/{id}/config/', 404, body)).toEqual([]);
    }
  });

  test('a browser preflight is answered', async () => {
    const response = await fetch(`${app.baseUrl}/api/v2.1/campaign-links/bergwald-2025/config/`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://www.bergwald.example.ch',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'x-requested-with',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
    expect(response.headers.get('access-control-allow-headers')).toBe('x-requested-with');
  });
});
