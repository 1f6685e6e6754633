import { createDb, type Db } from '../../src/db/knex';
import { freePort } from '../support/free-port';
import { captureLogs, type CapturedLogs } from '../support/log-capture';
import { basicAuth, STAFF, startTestApp, type TestApp, type TestAppDependencies } from '../support/test-app';
import { insertEndpoint, insertEvent } from '../support/webhook-rows';

const staff = basicAuth(STAFF.username, STAFF.password);
const METRICS_TOKEN = 'metrics-token-of-some-length';

const apps: TestApp[] = [];

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** An app of its own, with its logs captured. */
async function serve(env: NodeJS.ProcessEnv = {}, { connect }: Pick<TestAppDependencies, 'connect'> = {}): Promise<{ baseUrl: string; db: Db; logs: CapturedLogs }> {
  const logs = captureLogs();
  const app = await startTestApp(env, { log: logs.log, connect });
  apps.push(app);
  return { baseUrl: app.baseUrl, db: app.db, logs };
}

const requestLines = (logs: CapturedLogs) => logs.entries().filter((entry) => entry.msg === 'request');

async function scrape(baseUrl: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

describe('request ids and request log lines', () => {
  test('a request without an id gets a new UUID, echoed in the response and carried by its one log line', async () => {
    const { baseUrl, logs } = await serve();
    const response = await fetch(`${baseUrl}/admin/api/webhook-endpoint`, { headers: { authorization: staff } });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    expect(requestLines(logs)).toEqual([
      expect.objectContaining({
        level: 30,
        requestId,
        method: 'GET',
        route: '/admin/api/webhook-endpoint',
        status: 200,
        durationMs: expect.any(Number),
      }),
    ]);
  });

  test('an acceptable X-Request-Id is kept; one too long or with other characters is replaced', async () => {
    const { baseUrl, logs } = await serve();
    const offered = ['lb-7f3a.9c:01_x', 'x'.repeat(65), 'has space', 'quote"d', '{"json":1}'];
    const answered: string[] = [];
    for (const id of offered) {
      const response = await fetch(`${baseUrl}/healthz`, { headers: { 'x-request-id': id } });
      answered.push(response.headers.get('x-request-id') ?? '');
    }
    expect(answered[0]).toBe('lb-7f3a.9c:01_x');
    for (const replaced of answered.slice(1)) expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(answered).size).toBe(offered.length);
    // Probes are logged at debug, so that orchestrators polling them do not drown the other lines.
    expect(requestLines(logs).map((line) => [line.requestId, line.level, line.route])).toEqual(
      answered.map((id) => [id, 20, '/healthz']),
    );
  });

  test('logs the route pattern and never the path values, query, credentials or body', async () => {
    const { baseUrl, logs } = await serve();
    await fetch(`${baseUrl}/admin/api/webhook-events/987654?status=token-in-query`, { headers: { authorization: staff } });
    await fetch(`${baseUrl}/admin/api/webhook-events/987654`, { headers: { authorization: 'Bearer not-a-valid-token' } });
    await fetch(`${baseUrl}/admin/api/webhook-endpoint`, {
      method: 'PUT',
      headers: { authorization: staff, 'content-type': 'application/json' },
      body: JSON.stringify({ basic_auth_password: 'body-password-123', url: 'ftp://nowhere' }),
    });
    await fetch(`${baseUrl}/admin/api/webhook-endpoint`, { method: 'DELETE', headers: { authorization: staff } });
    await fetch(`${baseUrl}/no/such/path-4711`);

    expect(requestLines(logs).map(({ method, route, status }) => [method, route, status])).toEqual([
      ['GET', '/admin/api/webhook-events/:id', 404],
      ['GET', '/admin/api/webhook-events/:id', 401],
      ['PUT', '/admin/api/webhook-endpoint', 400],
      ['DELETE', '/admin/api/webhook-endpoint', 405],
      ['GET', 'unmatched', 404],
    ]);
    const text = logs.text();
    for (const secret of ['987654', 'token-in-query', 'not-a-valid-token', 'body-password-123', STAFF.password, 'path-4711']) {
      expect([secret, text.includes(secret)]).toEqual([secret, false]);
    }
  });
});

describe('/metrics', () => {
  test('counts requests by method, route pattern and status, with unknown paths as "unmatched"', async () => {
    const { baseUrl } = await serve();
    await fetch(`${baseUrl}/admin/api/webhook-events/123456`, { headers: { authorization: staff } });
    await fetch(`${baseUrl}/admin/api/webhook-events/123457`, { headers: { authorization: staff } });
    await fetch(`${baseUrl}/admin/api/webhook-events/123458`);
    await fetch(`${baseUrl}/nowhere-7531`);

    const text = await scrape(baseUrl);
    for (const line of [
      '# TYPE http_request_duration_seconds histogram',
      'http_request_duration_seconds_count{method="GET",route="/admin/api/webhook-events/:id",status="404"} 2',
      'http_request_duration_seconds_count{method="GET",route="/admin/api/webhook-events/:id",status="401"} 1',
      'http_request_duration_seconds_count{method="GET",route="unmatched",status="404"} 1',
      'http_request_duration_seconds_bucket{le="0.005",method="GET",route="unmatched",status="404"}',
    ]) {
      expect(text).toContain(line);
    }
    for (const raw of ['123456', '123458', 'nowhere-7531']) expect([raw, text.includes(raw)]).toEqual([raw, false]);
  });

  test('reports webhook events by status and the outbox backlog, counted in Postgres at scrape time', async () => {
    const { baseUrl, db: own } = await serve();
    const before = await scrape(baseUrl);
    expect(before).toContain('webhook_events{status="waiting"} 0');
    expect(before).toContain('webhook_outbox_pending_events 0');
    expect(before).toContain('webhook_outbox_oldest_pending_seconds 0');

    const endpoint = await insertEndpoint(own, { url: 'https://crm.example.org/hooks' });
    const events = [];
    for (let i = 0; i < 5; i++) events.push(await insertEvent(own, endpoint));
    await own('webhook_events').whereIn('id', [events[0].id, events[1].id]).update({ status: 'delivered', workflow_started_at: own.fn.now() });
    await own('webhook_events').where({ id: events[2].id }).update({ status: 'max_retries_reached', workflow_started_at: own.fn.now() });
    await own('webhook_events').where({ id: events[3].id }).update({ created_at: own.raw("now() - interval '90 seconds'") });

    const after = await scrape(baseUrl);
    const counted = { waiting: 2, delivered: 2, failed: 0, max_retries_reached: 1 };
    for (const [status, count] of Object.entries(counted)) expect(after).toContain(`webhook_events{status="${status}"} ${count}`);
    expect(after).toContain('webhook_outbox_pending_events 2');
    const age = Number(/^webhook_outbox_oldest_pending_seconds (\S+)$/m.exec(after)?.[1]);
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(150);
  });

  test('counts events by status without reading the events: the counts answer while webhook_events is locked', async () => {
    const { baseUrl, db: own } = await serve();
    const endpoint = await insertEndpoint(own, { url: 'https://crm.example.org/hooks' });
    const events = [await insertEvent(own, endpoint), await insertEvent(own, endpoint)];
    await own('webhook_events').where({ id: events[0].id }).update({ status: 'delivered', workflow_started_at: own.fn.now() });

    // As a long-running statement or a migration might hold it: every query that reads the table waits.
    const locker = await own.transaction();
    try {
      await locker.raw('LOCK TABLE webhook_events IN ACCESS EXCLUSIVE MODE');
      const text = await scrape(baseUrl);
      expect(text).toContain('webhook_events{status="waiting"} 1');
      expect(text).toContain('webhook_events{status="delivered"} 1');
      // The backlog gauge does read the table: it waited out the scrape's limit.
      expect(text).toMatch(/^webhook_outbox_pending_events nan$/im);
    } finally {
      await locker.rollback();
    }
  });

  test('still answers while Postgres is unreachable, the gauges it could not read as NaN', async () => {
    const unreachable = `postgres://nobody@127.0.0.1:${await freePort()}/nothing`;
    const { baseUrl, logs } = await serve({}, { connect: () => createDb({ connectionString: unreachable }) });
    await fetch(`${baseUrl}/healthz`);
    const text = await scrape(baseUrl);
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/healthz",status="503"} 1');
    // prom-client writes "Nan"; Prometheus reads NaN case-insensitively.
    expect(text).toMatch(/^webhook_events\{status="waiting"\} nan$/im);
    expect(text).toMatch(/^webhook_events\{status="max_retries_reached"\} nan$/im);
    expect(text).toMatch(/^webhook_outbox_pending_events nan$/im);
    expect(text).toMatch(/^webhook_outbox_oldest_pending_seconds nan$/im);
    expect(text).toMatch(/^webhook_events_stuck\{status="waiting"\} nan$/im);
    expect(text).toMatch(/^webhook_endpoint_failing nan$/im);
    const warnings = logs.entries().filter((entry) => entry.msg === 'metric not collected: Postgres query failed');
    expect(warnings.map((entry) => String(entry.metric)).sort((a, b) => a.localeCompare(b))).toEqual([
      'webhook_endpoint_failing',
      'webhook_events',
      'webhook_events_stuck',
      'webhook_outbox_oldest_pending_seconds',
      'webhook_outbox_pending_events',
    ]);
    // The 503 of /healthz: the outage is a warning, the request line is at error level, both with one request id.
    const unavailable = logs.entries().filter((entry) => entry.msg === 'database unavailable');
    const failed = logs.entries().filter((entry) => entry.level === 50);
    expect(failed.map((entry) => entry.msg)).toEqual(['request']);
    expect(unavailable.map((entry) => entry.requestId)).toEqual([failed[0].requestId]);
  });

  test('with METRICS_TOKEN set, answers only the matching bearer token', async () => {
    const { baseUrl, logs } = await serve({ METRICS_TOKEN });
    const without = await fetch(`${baseUrl}/metrics`);
    expect(without.status).toBe(401);
    expect(without.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await without.json()).toEqual({ error: 'Metrics need the metrics bearer token', code: 'not_authenticated' });
    for (const authorization of [`Bearer ${METRICS_TOKEN}x`, `Basic ${METRICS_TOKEN}`, METRICS_TOKEN, `Bearer ${METRICS_TOKEN.slice(1)}`]) {
      expect((await fetch(`${baseUrl}/metrics`, { headers: { authorization } })).status).toBe(401);
    }
    await scrape(baseUrl, { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(logs.text()).not.toContain(METRICS_TOKEN);
  });

  test('the metrics token’s scheme is case-insensitive, as on staff routes (RFC 9110 §11.1), and nothing else is loosened', async () => {
    const { baseUrl } = await serve({ METRICS_TOKEN });
    for (const authorization of [`bearer ${METRICS_TOKEN}`, `BEARER ${METRICS_TOKEN}`, `bEaReR  ${METRICS_TOKEN}`]) {
      await scrape(baseUrl, { authorization });
    }
    for (const authorization of [
      `bearer ${METRICS_TOKEN.toUpperCase()}`,
      `Bearer${METRICS_TOKEN}`,
      `Bearerx ${METRICS_TOKEN}`,
      `Bearer ${METRICS_TOKEN} ${METRICS_TOKEN}`,
      `Token ${METRICS_TOKEN}`,
      'Bearer',
    ]) {
      expect([authorization, (await fetch(`${baseUrl}/metrics`, { headers: { authorization } })).status]).toEqual([authorization, 401]);
    }
  });
});
