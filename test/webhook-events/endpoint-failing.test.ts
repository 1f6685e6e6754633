import { documentedResponses } from '../support/documented-responses';
import { startTestApp, type TestApp } from '../support/test-app';
import { type AttemptAnswer, insertAttempt, insertEndpoint, insertEvent } from '../support/webhook-rows';

// The failing endpoint over a real database: the metric webhook_endpoint_failing and the admin API's answer through a
// streak's transitions (failing for less than ENDPOINT_FAILING_AFTER_MINUTES, then for it, then one success), with
// the app's clock moved (it starts at 2025-07-15T10:30:00Z).

let app: TestApp;
let eventId: number;
let attemptNumber = 0;

beforeAll(async () => {
  app = await startTestApp({ ENDPOINT_FAILING_AFTER_MINUTES: '30' });
  ({ id: eventId } = await insertEvent(app.db, await insertEndpoint(app.db, { url: 'https://crm.example.org/hooks' })));
});

afterAll(async () => {
  await app?.close();
});

const gauge = async () => {
  const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
  return Number(/^webhook_endpoint_failing (\S+)$/m.exec(text)?.[1]);
};
const status = async () => {
  const response = await app.request('GET', '/admin/api/endpoint-failing');
  expect(response.status).toBe(200);
  return response.body;
};
const moveClockTo = (instant: string) => {
  app.clock.now = Date.parse(instant) / 1000;
};

const attempt = (startedAt: string, outcome: 'delivered' | 'failed', answer?: AttemptAnswer) =>
  insertAttempt(app.db, eventId, ++attemptNumber, startedAt, outcome, answer);

test('without attempts: not failing, and nothing to show', async () => {
  expect(await gauge()).toBe(0);
  expect(await status()).toEqual({ failing: false, failing_after_minutes: 30, failing_since: null, last_success_at: null, last_failure: null });
});

test('follows the streak: failing from N minutes after its first failure, until one attempt delivers', async () => {
  await attempt('2025-07-15T09:00:00Z', 'delivered', { code: 200 });
  await attempt('2025-07-15T10:10:00Z', 'failed', { code: 502, body: `<html>Bad Gateway${' '.repeat(400)}</html>` });
  await attempt('2025-07-15T10:25:00Z', 'failed', { error: 'connect ECONNREFUSED 203.0.113.7:443' });

  // 20 minutes of failures: not yet.
  expect(await gauge()).toBe(0);
  expect(await status()).toMatchObject({ failing: false, failing_since: '2025-07-15T10:10:00Z', last_success_at: '2025-07-15T09:00:00Z' });

  // 30 minutes: failing, with the newest failure.
  moveClockTo('2025-07-15T10:40:00Z');
  expect(await gauge()).toBe(1);
  const failing = await status();
  expect(failing).toEqual({
    failing: true,
    failing_after_minutes: 30,
    failing_since: '2025-07-15T10:10:00Z',
    last_success_at: '2025-07-15T09:00:00Z',
    last_failure: { started_at: '2025-07-15T10:25:00Z', response_code: null, error: 'connect ECONNREFUSED 203.0.113.7:443', response_body_excerpt: null },
  });
  expect((await documentedResponses(app.baseUrl)).errors('get', '/admin/api/endpoint-failing', 200, failing)).toEqual([]);

  // A newer failure with an answer: its code and the start of its body, cut at 300 characters.
  await attempt('2025-07-15T10:35:00Z', 'failed', { code: 503, body: 'x'.repeat(1000) });
  expect((await status()).last_failure).toEqual({
    started_at: '2025-07-15T10:35:00Z',
    response_code: 503,
    error: null,
    response_body_excerpt: 'x'.repeat(300),
  });

  // One success ends the streak, whatever failed before it.
  await attempt('2025-07-15T10:38:00Z', 'delivered', { code: 204 });
  expect(await gauge()).toBe(0);
  expect(await status()).toEqual({
    failing: false,
    failing_after_minutes: 30,
    failing_since: null,
    last_success_at: '2025-07-15T10:38:00Z',
    last_failure: null,
  });

  // A new streak counts from its own first failure, not from the old one.
  await attempt('2025-07-15T10:39:00Z', 'failed', { code: 500 });
  moveClockTo('2025-07-15T11:08:59Z');
  expect(await gauge()).toBe(0);
  moveClockTo('2025-07-15T11:09:00Z');
  expect(await gauge()).toBe(1);
});

test('an endpoint that never delivered is failing N minutes after its first failure', async () => {
  const other = await startTestApp({ ENDPOINT_FAILING_AFTER_MINUTES: '5' });
  try {
    const { id } = await insertEvent(other.db, await insertEndpoint(other.db, { url: 'https://crm.example.org/hooks' }));
    await insertAttempt(other.db, id, 1, '2025-07-15T10:25:00Z', 'failed', { code: 401 });
    const text = await (await fetch(`${other.baseUrl}/metrics`)).text();
    expect(text).toMatch(/^webhook_endpoint_failing 1$/m);
    expect(text).toMatch(/# HELP webhook_endpoint_failing .* 5 minutes or more \(ENDPOINT_FAILING_AFTER_MINUTES\)/);
    expect((await other.request('GET', '/admin/api/endpoint-failing')).body).toMatchObject({ failing: true, last_success_at: null });
  } finally {
    await other.close();
  }
});

test('is staff only', async () => {
  expect((await app.anonymous.request('GET', '/admin/api/endpoint-failing')).status).toBe(401);
  expect((await app.request('GET', '/admin/api/endpoint-failing', undefined, app.nonStaff())).status).toBe(403);
});
