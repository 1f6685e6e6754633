import { loadConfig } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { createMetrics } from '../../src/observability/metrics';
import { startMetricsListener } from '../../src/runtime/components';
import { Lifecycle } from '../../src/runtime/lifecycle';
import { createTestDatabase } from '../support/database';
import { freePort } from '../support/free-port';

const log = createLogger('silent');
const METRICS_TOKEN = 'worker-metrics-token-123';
let db: Db;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
});

test('a worker or relay process serves its own registry on METRICS_PORT, with the token when one is set', async () => {
  const port = await freePort();
  const lifecycle = new Lifecycle(log);
  const metrics = createMetrics({ processMetrics: true });
  const config = loadConfig({ METRICS_PORT: String(port), METRICS_TOKEN, HOST: '127.0.0.1' });
  try {
    expect(await startMetricsListener({ config, log, lifecycle, metrics }, db)).toBe(port);
    metrics.deliveryAttempt({ event: 'shop_order.completed', outcome: 'failed', durationMs: 30_004 });

    const url = `http://127.0.0.1:${port}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    const response = await fetch(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('webhook_deliveries_total{outcome="failed",event="shop_order.completed"} 1');
    // A timed-out attempt (30 s limit) lands above the last bucket.
    expect(text).toContain('webhook_delivery_attempt_duration_seconds_bucket{le="30",outcome="failed"} 0');
    expect(text).toContain('webhook_delivery_attempt_duration_seconds_bucket{le="+Inf",outcome="failed"} 1');
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    // Only the metrics: no API, no database gauges (the API process reports those).
    expect(text).not.toContain('webhook_events');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(404);
  } finally {
    await lifecycle.stop();
  }
  await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
});

test('without METRICS_PORT no listener is started', async () => {
  const lifecycle = new Lifecycle(log);
  const runtime = { config: loadConfig({}), log, lifecycle, metrics: createMetrics() };
  expect(await startMetricsListener(runtime, db)).toBeUndefined();
});

test('each registry counts on its own, so that apps in one process do not see each other', async () => {
  const first = createMetrics();
  const second = createMetrics();
  first.httpRequest({ method: 'GET', route: '/healthz', status: 200, durationMs: 3 });
  expect(await first.registry.metrics()).toContain('http_request_duration_seconds_count{method="GET",route="/healthz",status="200"} 1');
  expect(await second.registry.metrics()).not.toContain('route="/healthz"');
  // Delivery series exist from the start at 0, so that the first attempt of a kind counts as an increase.
  expect(await second.registry.metrics()).toContain('webhook_deliveries_total{outcome="delivered",event="newsletter.subscribed"} 0');
  expect(await second.registry.metrics()).toContain('webhook_delivery_attempt_duration_seconds_count{outcome="failed"} 0');
});
