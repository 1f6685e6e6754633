import { createDeliveryActivities } from '../../activities/delivery-activities';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { isPrivateAddress } from '../../src/webhooks/subscriber-url';
import { runActivity } from '../support/activity-run';
import { createTestDatabase } from '../support/database';
import { dnsTable, PUBLIC_ADDRESS } from '../support/dns-table';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { PRODUCTION_ENV } from '../support/production-env';
import { attemptRows, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

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
  // Forms that embed a public IPv4 address are refused as well: what they reach depends on a translator.
  'v6-mapped-public.example.org': ['::ffff:8.8.8.8'],
  'v6-teredo.example.org': ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  'v6-6to4.example.org': ['2002:808:808::1'],
  'documentation.example.org': ['192.0.2.10'],
  'v6-documentation.example.org': ['2001:db8::10'],
  // One bad record among good ones is enough to refuse: the connection could be steered to it.
  'mixed.example.org': [PUBLIC_ADDRESS, '127.0.0.1'],
};

/**
 * The first and last address of every block of the IANA special-purpose registries (IPv4: all blocks and multicast;
 * IPv6: the blocks inside 2000::/3 and the ones outside that the allowlist refuses), and the addresses just beside
 * each IPv4 block and at the edges of the IPv6 allowlist, which are global unicast.
 */
const SPECIAL_PURPOSE: Record<string, [string, string]> = {
  'this network': ['0.0.0.0', '0.255.255.255'],
  'private 10/8': ['10.0.0.0', '10.255.255.255'],
  'shared address space (CGN)': ['100.64.0.0', '100.127.255.255'],
  loopback: ['127.0.0.0', '127.255.255.255'],
  'link-local': ['169.254.0.0', '169.254.255.255'],
  'private 172.16/12': ['172.16.0.0', '172.31.255.255'],
  'IETF protocol assignments': ['192.0.0.0', '192.0.0.255'],
  'TEST-NET-1': ['192.0.2.0', '192.0.2.255'],
  'AS112-v4': ['192.31.196.0', '192.31.196.255'],
  AMT: ['192.52.193.0', '192.52.193.255'],
  '6to4 relay anycast': ['192.88.99.0', '192.88.99.255'],
  'private 192.168/16': ['192.168.0.0', '192.168.255.255'],
  'direct delegation AS112': ['192.175.48.0', '192.175.48.255'],
  benchmarking: ['198.18.0.0', '198.19.255.255'],
  'TEST-NET-2': ['198.51.100.0', '198.51.100.255'],
  'TEST-NET-3': ['203.0.113.0', '203.0.113.255'],
  multicast: ['224.0.0.0', '239.255.255.255'],
  'reserved, broadcast': ['240.0.0.0', '255.255.255.255'],
  'v6 unspecified, loopback, IPv4-compatible': ['::', '::ffff'],
  'v6 IPv4-mapped': ['::ffff:0:0', '::ffff:ffff:ffff'],
  'v6 IPv4/IPv6 translation': ['64:ff9b::', '64:ff9b::ffff:ffff'],
  'v6 local-use translation': ['64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'],
  'v6 discard-only': ['100::', '100::ffff:ffff:ffff:ffff'],
  'v6 dummy prefix': ['100:0:0:1::', '100::1:ffff:ffff:ffff:ffff'],
  'v6 IETF protocol assignments (Teredo, PCP, TURN, benchmarking, AMT, AS112, ORCHID, drones)': [
    '2001::',
    '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff',
  ],
  'v6 documentation 2001:db8::/32': ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
  'v6 6to4': ['2002::', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'v6 direct delegation AS112': ['2620:4f:8000::', '2620:4f:8000:ffff:ffff:ffff:ffff:ffff'],
  'v6 documentation 3fff::/20': ['3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'v6 segment routing SIDs': ['5f00::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'v6 unique local': ['fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'v6 link-local': ['fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'v6 site-local (deprecated)': ['fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'v6 multicast': ['ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'v6 outside 2000::/3': ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '4000::'],
};

const GLOBAL_UNICAST = [
  ...['1.0.0.0', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '126.255.255.255', '128.0.0.0'],
  ...['169.253.255.255', '169.255.0.0', '172.15.255.255', '172.32.0.0', '192.0.1.255', '192.0.1.0', '192.0.3.0'],
  ...['192.31.195.255', '192.31.197.0', '192.52.192.255', '192.52.194.0', '192.88.98.255', '192.88.100.0'],
  ...['192.167.255.255', '192.169.0.0', '192.175.47.255', '192.175.49.0', '198.17.255.255', '198.20.0.0'],
  ...['198.51.99.255', '198.51.101.0', '203.0.112.255', '203.0.114.0', '223.255.255.255', '93.184.215.14'],
  ...['2000::', '2001:200::', '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::', '2001:4860:4860::8888'],
  ...['2003::', '2606:4700:4700::1111', '2620:4f:7fff:ffff:ffff:ffff:ffff:ffff', '2620:4f:8001::', '3ffe::1'],
  ...['3fff:1000::', '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
];

describe('the address ranges', () => {
  test('only global unicast is public: every special-purpose block is refused from its first to its last address', () => {
    for (const [block, [first, last]] of Object.entries(SPECIAL_PURPOSE)) {
      expect([block, isPrivateAddress(first), isPrivateAddress(last)]).toEqual([block, true, true]);
    }
    for (const ip of GLOBAL_UNICAST) expect([ip, isPrivateAddress(ip)]).toEqual([ip, false]);
  });

  test('the resolver answers used below are all refused', () => {
    for (const addresses of Object.values(NON_PUBLIC)) {
      expect([addresses, addresses.some(isPrivateAddress)]).toEqual([addresses, true]);
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
      startTestApp({ ...PRODUCTION_ENV }, { resolveHost: resolver }),
      startTestApp({}, { resolveHost: resolver }),
      startTestApp({ ...PRODUCTION_ENV, ALLOW_INSECURE_WEBHOOK_URLS: 'true' }, { resolveHost: resolver }),
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
      expect(response.body.error).toMatch(new RegExp(`^url: ${host.replace(/\./g, '\\.')} resolves to .+, which is not a public \\(global unicast\\) address$`));
    }
    expect((await production.request('GET', '/admin/api/webhook-endpoint')).body.url).toBe('https://crm.example.org/hooks');
    expect((await put(production, 'https://v6.example.org/hooks')).status).toBe(200);
  });

  test('production refuses a host that does not resolve', async () => {
    const response = await put(production, 'https://nowhere.example.org/hooks');
    expect(response).toEqual({
      status: 400,
      body: {
        error: 'url: the host nowhere.example.org could not be resolved (ENOTFOUND)',
        code: 'invalid_body',
        problems: [{ in: 'body', name: 'url', message: 'the host nowhere.example.org could not be resolved (ENOTFOUND)' }],
      },
    });
  });

  test('literal addresses are refused without asking the DNS', async () => {
    for (const url of [
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'https://0x7f000001/',
      'https://2130706433/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:7f00:1]/',
      'https://[64:ff9b::808:808]/',
      'https://[2001::1]/',
      'https://[fe80::1%25eth0]/',
    ]) {
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
  const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A) => runActivity('webhook-event-ssrf', fn, ...args);

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
    const activities = createDeliveryActivities({ db, log, http: { timeoutMs: 2_000 }, keyring: TEST_KEYRING, ...options });
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
      error: 'Not sent: rebind.example.org resolves to 127.0.0.1, which is not a public (global unicast) address',
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
    expect(result.error).toBe('Not sent: 127.0.0.1 is not a public (global unicast) address');
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
