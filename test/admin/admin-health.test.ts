import { documentedResponses } from '../support/documented-responses';
import { startTestApp, type TestApp } from '../support/test-app';
import { insertEndpoint, insertEvent } from '../support/webhook-rows';

// The health view's numbers: attempts per hour by outcome, success rate, median and p95 duration, last success.
// The app's clock stands at 2025-07-15T10:30:00Z.

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

const health = (query = '') => app.request('GET', `/admin/api/delivery-health${query}`);

test('without attempts: every hour at zero, no rate, no percentiles, no last success', async () => {
  const response = await health();
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({
    window: '24h',
    from: '2025-07-14T11:00:00Z',
    to: '2025-07-15T10:30:00Z',
    attempts: 0,
    success_rate: null,
    median_ms: null,
    p95_ms: null,
    last_success_at: null,
  });
  expect(response.body.hours).toHaveLength(24);
  expect(response.body.hours.every((hour: { delivered: number; failed: number }) => hour.delivered === 0 && hour.failed === 0)).toBe(true);
});

test('counts the attempts of the window by hour and outcome, with their rate and duration percentiles', async () => {
  const { id } = await insertEvent(app.db, await insertEndpoint(app.db, { url: 'https://crm.example.org/hooks' }));
  const attempts: Array<[string, number, 'delivered' | 'failed']> = [
    ['2025-07-15T09:05:00Z', 10, 'delivered'],
    ['2025-07-15T09:10:00Z', 20, 'delivered'],
    ['2025-07-15T09:59:59Z', 30, 'delivered'],
    ['2025-07-15T09:30:00Z', 1000, 'failed'],
    ['2025-07-15T10:29:00Z', 40, 'delivered'],
    // Outside the 24 hours, inside the 7 days.
    ['2025-07-13T08:00:00Z', 50, 'failed'],
    // Outside both, and later than the clock: not counted.
    ['2025-07-07T08:00:00Z', 60, 'delivered'],
    ['2025-07-15T10:31:00Z', 70, 'failed'],
  ];
  await app.db('webhook_delivery_attempts').insert(
    attempts.map(([startedAt, durationMs, outcome], index) => ({
      event_id: id,
      number: index + 1,
      started_at: new Date(startedAt),
      duration_ms: durationMs,
      outcome,
    })),
  );

  const day = await health('?window=24h');
  expect(day.body).toMatchObject({ attempts: 5, delivered: 4, failed: 1, success_rate: 0.8, median_ms: 30, last_success_at: '2025-07-15T10:29:00Z' });
  // percentile_cont: 40 + 0.8 × (1000 − 40)
  expect(day.body.p95_ms).toBe(808);
  expect(day.body.hours.slice(-2)).toEqual([
    { start: '2025-07-15T09:00:00Z', delivered: 3, failed: 1 },
    { start: '2025-07-15T10:00:00Z', delivered: 1, failed: 0 },
  ]);
  expect((await documentedResponses(app.baseUrl)).errors('get', '/admin/api/delivery-health', 200, day.body)).toEqual([]);

  const week = await health('?window=7d');
  expect(week.body).toMatchObject({ window: '7d', from: '2025-07-08T11:00:00Z', attempts: 6, delivered: 4, failed: 2 });
  expect(week.body.hours).toHaveLength(168);
  expect(week.body.hours.find((hour: { start: string }) => hour.start === '2025-07-13T08:00:00Z')).toEqual({
    start: '2025-07-13T08:00:00Z',
    delivered: 0,
    failed: 1,
  });
});

test('another window is a 400 naming it; staff only', async () => {
  for (const query of ['?window=30d', '?window=24H', '?window=24h&window=7d']) {
    expect([query, (await health(query)).body.code]).toEqual([query, 'invalid_parameter']);
  }
  expect((await app.request('GET', '/admin/api/delivery-health', undefined, {})).status).toBe(401);
  expect((await app.request('GET', '/admin/api/delivery-health', undefined, app.nonStaff())).status).toBe(403);
});
