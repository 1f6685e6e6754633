import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { isPrivateAddress } from '../../src/webhooks/endpoint-rules';
import { createTestDatabase } from '../support/database';
import { dnsTable, PUBLIC_ADDRESS } from '../support/dns-table';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { attemptRows, insertEndpoint, insertEvent } from '../support/webhook-rows';

/*
 * Server-side request forgery: a webhook URL is the one place where an admin (or whoever took over an admin
 * account) makes this service send requests. In production it must never reach this machine, the private network
 * or the cloud's metadata service, however the URL is spelled and whatever the DNS answers, now or later.
 */

const NON_PUBLIC = {
  'loopback.example.org': ['127.0.0.1'],
  'private10.example.org': ['10.20.30.40'],
  'private172.example.org': ['172.16.5.4'],
  'private192.example.org': ['192.168.178.1'],
  'cgnat.example.org': ['100.64.1.1'],
  'zero.example.org': ['0.0.0.0'],
  'metadata.example.org': ['169.254.169.254'],
  'linklocal.example.org': ['169.254.10.10'],
  'multicast.example.org': ['239.1.2.3'],
  'v6-loopback.example.org': ['::1'],
  'v6-ula.example.org': ['fd12:3456::1'],
  'v6-metadata.example.org': ['fd00:ec2::254'],
  'v6-linklocal.example.org': ['fe80::1'],
  'v6-mapped.example.org': ['::ffff:10.0.0.1'],
  'v6-nat64.example.org': ['64:ff9b::a9fe:a9fe'],
  // One bad record among good ones is enough to refuse: the connection could be steered to it.
  'mixed.example.org': [PUBLIC_ADDRESS, '127.0.0.1'],
};

describe('the address ranges', () => {
  test('every non-public range is recognised, public addresses are not', () => {
    for (const addresses of Object.values(NON_PUBLIC)) {
      expect([addresses, addresses.some(isPrivateAddress)]).toEqual([addresses, true]);
    }
    for (const ip of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, false]);
    }
  });
});

describe('at configuration (PUT /admin/api/webhook-endpoint)', () => {
  const resolver = dnsTable({ ...NON_PUBLIC, 'crm.example.org': [PUBLIC_ADDRESS], 'v6.example.org': ['2606:4700::6810:84e5'] });
  let production: TestApp;
  let development: TestApp;
  let productionOptIn: TestApp;

  beforeAll(async () => {
    [production, development, productionOptIn] = await Promise.all([
      startTestApp({ NODE_ENV: 'production' }, { resolveHost: resolver }),
      startTestApp({}, { resolveHost: resolver }),
      startTestApp({ NODE_ENV: 'production', ALLOW_INSECURE_WEBHOOK_URLS: 'true' }, { resolveHost: resolver }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([production, development, productionOptIn].map((app) => app?.close()));
  });

  const put = (app: TestApp, url: string) => app.request('PUT', '/admin/api/webhook-endpoint', { url });

  test('production refuses host names that resolve to any non-public address, and changes nothing', async () => {
    expect((await put(production, 'https://crm.example.org/hooks')).status).toBe(200);
    for (const host of Object.keys(NON_PUBLIC)) {
      const response = await put(production, `https://${host}/hooks`);
      expect([host, response.status, response.body.code]).toEqual([host, 400, 'invalid_body']);
      expect(response.body.error).toMatch(new RegExp(`^url: ${host.replace(/\./g, '\\.')} resolves to .+, a private, loopback or link-local address$`));
    }
    expect((await production.request('GET', '/admin/api/webhook-endpoint')).body.url).toBe('https://crm.example.org/hooks');
    expect((await put(production, 'https://v6.example.org/hooks')).status).toBe(200);
  });

  test('production refuses a host that does not resolve', async () => {
    const response = await put(production, 'https://nowhere.example.org/hooks');
    expect(response).toEqual({
      status: 400,
      body: { error: 'url: the host nowhere.example.org could not be resolved (ENOTFOUND)', code: 'invalid_body' },
    });
  });

  test('literal addresses are refused without asking the DNS', async () => {
    for (const url of ['https://169.254.169.254/latest/meta-data/', 'https://[fd00:ec2::254]/', 'https://0x7f000001/']) {
      const before = [...resolver.calls.values()].reduce((a, b) => a + b, 0);
      const response = await put(production, url);
      expect([url, response.status]).toEqual([url, 400]);
      expect([...resolver.calls.values()].reduce((a, b) => a + b, 0)).toBe(before);
    }
  });

  test('development, and production with the explicit setting, accept them', async () => {
    for (const app of [development, productionOptIn]) {
      expect((await put(app, 'https://metadata.example.org/hooks')).status).toBe(200);
      expect((await put(app, 'http://127.0.0.1:4000/hooks')).status).toBe(200);
    }
  });
});

describe('at delivery time', () => {
  const log = createLogger('silent');
  const quiet = new DefaultLogger('ERROR');
  const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> =>
    new MockActivityEnvironment({ workflowExecution: { workflowId: 'webhook-event-ssrf', runId: 'run' } }, { logger: quiet }).run(
      fn,
      ...args,
    ) as Promise<R>;

  let db: Db;
  let subscriber: Subscriber;

  beforeAll(async () => {
    ({ db } = await createTestDatabase());
    subscriber = await startSubscriber();
  });
  beforeEach(() => {
    subscriber.requests.length = 0;
  });
  afterAll(async () => {
    await subscriber?.close();
    await db?.destroy();
  });

  async function attempt(url: string, options: { allowPrivateAddresses: boolean; resolve: ReturnType<typeof dnsTable> }) {
    const event = await insertEvent(db, await insertEndpoint(db, { url }));
    const activities = createActivities({ db, log, http: { timeoutMs: 2_000 }, ...options });
    const result = await run(activities.attemptDelivery, { eventId: event.id, attemptNumber: 1, attempt: { kind: 'scheduled', number: 1 }, retryDelayMs: null });
    return { result, attempts: await attemptRows(db, event.id) };
  }

  test('a name that was public at configuration but resolves to this machine now (DNS rebinding) is not contacted', async () => {
    // The subscriber runs on loopback: the attack would reach it if the check were only made at configuration.
    const rebinding = dnsTable({ 'rebind.example.org': (call) => (call === 1 ? [PUBLIC_ADDRESS] : ['127.0.0.1']) });
    await rebinding('rebind.example.org'); // the configuration-time lookup saw a public address
    const { result, attempts } = await attempt(`http://rebind.example.org:${subscriber.port}/webhooks`, {
      allowPrivateAddresses: false,
      resolve: rebinding,
    });
    expect(result).toMatchObject({
      outcome: 'failed',
      responseCode: null,
      error: 'Not sent: rebind.example.org resolves to 127.0.0.1, a private, loopback or link-local address',
    });
    expect(attempts).toMatchObject([{ number: 1, outcome: 'failed', error: result.error }]);
    expect(subscriber.requests).toHaveLength(0);
  });

  test('every non-public answer is refused at delivery, and a literal address too', async () => {
    const resolve = dnsTable(NON_PUBLIC);
    for (const host of ['metadata.example.org', 'v6-metadata.example.org', 'mixed.example.org', 'private10.example.org']) {
      const { result } = await attempt(`https://${host}/webhooks`, { allowPrivateAddresses: false, resolve });
      expect(result.error).toMatch(new RegExp(`^Not sent: ${host.replace(/\./g, '\\.')} resolves to `));
    }
    const { result } = await attempt(`http://127.0.0.1:${subscriber.port}/webhooks`, { allowPrivateAddresses: false, resolve });
    expect(result.error).toBe('Not sent: 127.0.0.1 is a private, loopback or link-local address');
    expect(subscriber.requests).toHaveLength(0);
  });

  test('an unresolvable host is a failed attempt with a clear error', async () => {
    const { result } = await attempt('https://gone.example.org/webhooks', { allowPrivateAddresses: false, resolve: dnsTable({}) });
    expect(result).toMatchObject({
      outcome: 'failed',
      error: 'Connection error: the host gone.example.org could not be resolved (ENOTFOUND)',
    });
  });

  test('the connection goes to the address that was checked: one lookup per attempt, no second resolution', async () => {
    // Development allows loopback; the first answer is where the subscriber listens, any later answer is not.
    const resolve = dnsTable({ 'pinned.example.org': (call) => (call === 1 ? ['127.0.0.1'] : ['127.0.0.2']) });
    const { result } = await attempt(`http://pinned.example.org:${subscriber.port}/webhooks`, { allowPrivateAddresses: true, resolve });
    expect(result).toMatchObject({ outcome: 'delivered', responseCode: 200 });
    expect(resolve.calls.get('pinned.example.org')).toBe(1);
    expect(subscriber.requests).toHaveLength(1);
    expect(subscriber.requests[0].headers.host).toBe(`pinned.example.org:${subscriber.port}`);
  });
});
