import { generateApiData } from '../../bench/support/api-data';
import { startTestApp, type TestApp } from '../support/test-app';

// The read API benchmark's data set, made small: the generator writes rows as the schema stands, so a migration
// that adds a required column breaks it here rather than in the next benchmark run.
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  await generateApiData(app.db, { contacts: 50, checkouts: 180 });
});

afterAll(async () => {
  await app?.close();
});

test('makes every ninth checkout a two-position one and puts half of the checkouts into 2024', async () => {
  const response = await app.get('/api/v2.1/crm/donations/?dateFrom=01-01-2024&dateTo=12-31-2024');
  expect(response.status).toBe(200);
  const donations = (await response.json()) as { donor: { email: string } }[];
  expect(donations).toHaveLength(100);
  expect(donations[0].donor.email).toMatch(/^donor\d+@example\.org$/);

  const all = await app.db('donations').count({ count: '*' });
  expect(Number(all[0].count)).toBe(200);
});

test('stores each checkout with its contact as the donor', async () => {
  const mismatched = await app.db.raw(
    `SELECT count(*) AS count FROM checkouts c JOIN contacts ct ON ct.id = c.contact_id
      WHERE c.donor->>'email' IS DISTINCT FROM ct.email OR c.donor->>'last_name' IS DISTINCT FROM ct.last_name`,
  );
  expect(Number(mismatched.rows[0].count)).toBe(0);
});

test('serves the contacts with their statistics', async () => {
  const response = await app.get('/api/v2.1/crm/contacts/?page_size=100');
  const page = (await response.json()) as { count: number; results: { statistics: { donation_count: number } }[] };
  expect(page.count).toBe(50);
  expect(page.results.reduce((sum, contact) => sum + contact.statistics.donation_count, 0)).toBe(180);
});
