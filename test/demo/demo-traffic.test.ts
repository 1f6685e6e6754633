import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { connectToService, CredentialsRefusedError, ServiceUnreachableError } from '../../src/demo/service-client';
import { DEMO_CAMPAIGNS } from '../../src/demo/swiss-data';
import { type DemoTrafficOptions, runDemoTraffic, trafficOptionsFrom, whereToWatch } from '../../src/demo/traffic';
import { planTraffic, type TrafficStep } from '../../src/demo/traffic-plan';
import { runTraffic } from '../../src/demo/traffic-runner';
import { freePort } from '../support/free-port';
import { startTcpProxy } from '../support/tcp-proxy';
import { NON_STAFF, STAFF, startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let campaigns: { id: number; title: string }[];

beforeAll(async () => {
  app = await startTestApp();
  campaigns = await app.db('campaigns').insert(DEMO_CAMPAIGNS.map(({ title }) => ({ title }))).returning(['id', 'title']);
});

afterAll(async () => {
  await app?.close();
});

function countOf(steps: TrafficStep[], ...kinds: TrafficStep['kind'][]): number {
  return steps.filter((step) => kinds.includes(step.kind)).length;
}

async function countRows(table: string, where: (query: any) => any = (query) => query): Promise<number> {
  const [{ n }] = await where(app.db(table)).count('* as n');
  return Number(n);
}

test('the traffic command configures the endpoint and creates the rows and events its plan describes', async () => {
  const options: DemoTrafficOptions = {
    baseUrl: app.baseUrl,
    credentials: STAFF,
    count: 24,
    ratePerSecond: 500,
    maxDurationMs: 120_000,
    seed: 2,
    runId: 'it',
    endpoint: { url: 'http://127.0.0.1:4000/webhooks', payloadVersion: 'v2.1' },
  };
  const steps = planTraffic({ seed: options.seed, count: options.count, runId: options.runId, campaigns });
  const summary = await runDemoTraffic(options);

  const endpoint = await app.request('GET', '/admin/api/webhook-endpoint');
  expect(endpoint.body).toMatchObject({ url: 'http://127.0.0.1:4000/webhooks', active: true, payload_version: 'v2.1', events: expect.arrayContaining(['donation.reconciled', 'newsletter.subscribed']) });
  expect(endpoint.body.events).toHaveLength(5);

  const confirmations = steps.filter((step) => step.kind === 'newsletter-confirmation').map((step) => step.email);
  const confirmedEmails = new Set(confirmations);
  const checkouts = countOf(steps, 'single-donation', 'multi-checkout', 'recurring-start');
  const followUps = countOf(steps, 'recurring-follow-up');
  const reconciliations = countOf(steps, 'reconciliation');
  const shopOrders = steps.filter((step) => step.kind === 'shop-order');
  // The seed was chosen so that this short run has every kind of call.
  expect(new Set(steps.map((step) => step.kind)).size).toBe(9);

  expect(summary).toMatchObject({
    planned: 24,
    sent: 24,
    skipped: 0,
    errors: {},
    duplicates: countOf(steps, 'repeat') + confirmations.length - confirmedEmails.size,
  });
  expect(summary.stopped).toBeUndefined();

  expect(await countRows('checkouts')).toBe(checkouts + followUps);
  expect(await countRows('recurring_donations')).toBe(countOf(steps, 'recurring-start'));
  expect(await countRows('reconciliations')).toBe(reconciliations);
  expect(await countRows('newsletter_subscriptions')).toBe(countOf(steps, 'newsletter-sign-up'));
  expect(await countRows('newsletter_subscriptions', (q) => q.whereNotNull('confirmed_at'))).toBe(confirmedEmails.size);
  expect(await countRows('shop_orders')).toBe(shopOrders.length);
  const guests = shopOrders.filter((step) => step.kind === 'shop-order' && step.body.customer_type === 'guest').length;
  expect(await countRows('shop_orders', (q) => q.whereNull('contact_id'))).toBe(guests);

  const events = await app.db('webhook_events').select('event_type').count('* as n').groupBy('event_type');
  expect(Object.fromEntries(events.map((row) => [row.event_type, Number(row.n)]))).toEqual({
    'donation.completed': checkouts,
    'donation.recurring_completed': followUps,
    'donation.reconciled': reconciliations,
    'newsletter.subscribed': confirmedEmails.size,
    'shop_order.completed': shopOrders.length,
  });
});

test('a run keeps to its rate and stops at its time limit; an interrupted run stops at once', async () => {
  const client = await connectToService(app.baseUrl, STAFF);
  const steps = planTraffic({ seed: 1, count: 20, runId: 'paced', campaigns });
  // Virtual time: sleeping moves the clock, so the pacing is checked without waiting.
  let now = 0;
  const sleeps: number[] = [];
  const paced = await runTraffic({
    client,
    steps,
    ratePerSecond: 4,
    maxDurationMs: 1_000,
    nowMs: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  });
  expect(paced).toMatchObject({ planned: 20, sent: 4, stopped: 'time-limit' });
  expect(sleeps).toEqual([250, 250, 250]);

  const interrupt = new AbortController();
  const interrupted = await runTraffic({
    client,
    steps: planTraffic({ seed: 2, count: 20, runId: 'stopped', campaigns }),
    ratePerSecond: 500,
    maxDurationMs: 60_000,
    signal: interrupt.signal,
    onStep: (_result, summary) => summary.sent === 2 && interrupt.abort(),
  });
  expect(interrupted).toMatchObject({ sent: 2, stopped: 'interrupted' });
});

test('a run outlives the five-minute access token: the client signs in again and goes on', async () => {
  const client = await connectToService(app.baseUrl, STAFF);
  const summary = await runTraffic({
    client,
    steps: planTraffic({ seed: 3, count: 4, runId: 'long', campaigns }),
    ratePerSecond: 500,
    maxDurationMs: 60_000,
    onStep: () => {
      app.clock.now += 6 * 60;
    },
  });
  expect(summary).toMatchObject({ sent: 4, errors: {} });
});

test('a service that stops answering ends the run with what was counted so far', async () => {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(app.baseUrl).port) });
  try {
    const client = await connectToService(`http://127.0.0.1:${proxy.port}`, STAFF);
    const summary = await runTraffic({
      client,
      steps: planTraffic({ seed: 4, count: 10, runId: 'cut', campaigns }),
      ratePerSecond: 500,
      maxDurationMs: 60_000,
      onStep: (_result, progress) => {
        if (progress.sent === 2) void proxy.cut();
      },
    });
    expect(summary).toMatchObject({ sent: 2, stopped: 'unreachable' });
  } finally {
    await proxy.close();
  }
});

test('wrong credentials, a non-staff account and a service that is not there are told before any traffic', async () => {
  await expect(connectToService(app.baseUrl, { ...STAFF, password: 'wrong' })).rejects.toThrow(CredentialsRefusedError);
  await expect(connectToService(app.baseUrl, NON_STAFF)).rejects.toThrow('not a staff user');
  await expect(connectToService(`http://127.0.0.1:${await freePort()}`, STAFF)).rejects.toThrow(ServiceUnreachableError);
});

describe('command line', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'demo-traffic-'));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '3100' });

  test('defaults: the local service, the embedded default password from the data folder, a fresh run id', () => {
    writeFileSync(path.join(dataDir, 'admin-password.txt'), 'generated-secret\n');
    const parsed = trafficOptionsFrom(['--seed', '7'], config, new Date(1_700_000_000_000));
    expect(parsed).toEqual({
      options: {
        baseUrl: 'http://localhost:3100',
        credentials: { username: 'admin', password: 'generated-secret' },
        count: 100,
        ratePerSecond: 10,
        maxDurationMs: 600_000,
        seed: 7,
        runId: (1_700_000_000_000).toString(36),
        endpoint: undefined,
      },
    });
  });

  test('--configure-endpoint points at the local subscriber unless told otherwise', () => {
    const parsed = trafficOptionsFrom(['--configure-endpoint', '--payload-version', 'v1', '--password', 'pw'], config);
    expect(parsed).toMatchObject({ options: { endpoint: { url: 'http://127.0.0.1:4000/webhooks', payloadVersion: 'v1' } } });
  });

  test('refuses other machines unless --allow-remote, and out-of-range or unknown flags', () => {
    expect(trafficOptionsFrom(['--base-url', 'https://donations.example.org', '--password', 'pw'], config)).toEqual({
      problems: [expect.stringContaining('--allow-remote')],
    });
    expect(trafficOptionsFrom(['--configure-endpoint', '--subscriber-url', 'http://10.0.0.5/hook', '--password', 'pw'], config)).toEqual({
      problems: [expect.stringContaining('--subscriber-url')],
    });
    expect(trafficOptionsFrom(['--base-url', 'https://donations.example.org', '--allow-remote', '--password', 'pw'], config)).toHaveProperty('options');
    expect(trafficOptionsFrom(['--count', '0', '--rate', '0'], config)).toEqual({
      problems: [expect.stringContaining('--count'), expect.stringContaining('--rate')],
    });
    expect(trafficOptionsFrom(['--count', '20000'], config)).toHaveProperty('problems');
    expect(trafficOptionsFrom(['--bogus'], config)).toEqual({ problems: [expect.stringContaining('bogus')] });
  });
});

test('the command names the Temporal UI of the service the calls went to, or none where that service knows of none', async () => {
  const client = await connectToService(app.baseUrl, STAFF);
  expect(await whereToWatch(client)).toBe(`Watch the deliveries: ${app.baseUrl}/admin/ and the Temporal UI (http://127.0.0.1:${app.config.temporal.uiPort}).`);
  for (const [env, hint] of [
    [{ TEMPORAL_ADDRESS: '127.0.0.1:7933', TEMPORAL_UI_URL: 'http://127.0.0.1:18080/' }, 'and the Temporal UI (http://127.0.0.1:18080).'],
    [{ TEMPORAL_ADDRESS: '127.0.0.1:7933' }, '(the service names no Temporal UI; its TEMPORAL_UI_URL would).'],
  ] as const) {
    const stack = await startTestApp(env);
    try {
      expect(await whereToWatch(await connectToService(stack.baseUrl, STAFF))).toBe(`Watch the deliveries: ${stack.baseUrl}/admin/ ${hint}`);
    } finally {
      await stack.close();
    }
  }
});
