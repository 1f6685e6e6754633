import { loadConfig } from '../../src/config';
import { forwardedClientAddress, parseTrustedProxies, trustedProxyList } from '../../src/shared/trusted-proxy-list';
import { startTestApp, STAFF, type TestApp } from '../support/test-app';

describe('TRUST_PROXY', () => {
  test('takes addresses and CIDR ranges of both families; empty or 0 trusts none', () => {
    expect(parseTrustedProxies(' 172.30.0.10 , 10.0.0.0/8,fd00::/8, ::1 ')).toEqual(['172.30.0.10', '10.0.0.0/8', 'fd00::/8', '::1']);
    expect(parseTrustedProxies('')).toEqual([]);
    expect(parseTrustedProxies('0')).toEqual([]);
    expect(loadConfig({}).http.trustedProxies).toEqual([]);
  });

  test.each(['1', '2', '10', '127.0.0.1,1'])('refuses the old count of hops %j at start, naming the new form', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/TRUST_PROXY takes the addresses or CIDR ranges .* no longer a count of hops/);
  });

  test.each(['caddy', '999.0.0.1', '10.0.0.0/33', '::1/129', '10.0.0.0/', '10.0.0.1/8/8', 'fe80::1%eth0'])('refuses %j', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/is not an IP address or CIDR range/);
  });

  test.each(['0.0.0.0/0', '::/0', '10.0.0.1,::/0'])('refuses %j, which is every address', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/is every address: it would believe X-Forwarded-For from any peer/);
  });

  test('the client is the rightmost forwarded address that is not a trusted proxy', () => {
    const proxies = trustedProxyList(['10.0.0.0/8', '172.30.0.10']);
    const client = (peer: string, forwardedFor?: string) => forwardedClientAddress(proxies, peer, forwardedFor);
    expect(client('172.30.0.10', '198.51.100.7')).toBe('198.51.100.7');
    // What the client wrote itself stands left of what the proxies appended: not read.
    expect(client('172.30.0.10', '203.0.113.66, 198.51.100.7')).toBe('198.51.100.7');
    expect(client('172.30.0.10', '198.51.100.7, 10.1.2.3')).toBe('198.51.100.7');
    expect(client('172.30.0.10', '10.1.2.3, 10.4.5.6')).toBe('10.1.2.3');
    expect(client('172.30.0.10', '::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(client('172.30.0.10', 'not-an-address, 10.1.2.3')).toBe('10.1.2.3');
    expect(client('172.30.0.10')).toBe('172.30.0.10');
    expect(client('198.51.100.9', '10.1.2.3')).toBe('198.51.100.9');
  });
});

describe('forwarding headers over HTTP', () => {
  const wrongLogin = (app: TestApp, forwardedFor: string) =>
    app.anonymous.request('POST', '/authentication/create', { username: STAFF.username, password: 'wrong' }, { 'X-Forwarded-For': forwardedFor });
  const limits = { LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME: '2', LOGIN_MAX_DELAY_SECONDS: '0' };

  test('from a peer that is not a trusted proxy, a new X-Forwarded-For per guess buys no fresh login budget', async () => {
    const app = await startTestApp({ ...limits, TRUST_PROXY: '192.0.2.1' });
    try {
      const statuses = [];
      for (let i = 1; i <= 4; i += 1) statuses.push((await wrongLogin(app, `198.51.100.${i}`)).status);
      expect(statuses).toEqual([401, 401, 429, 429]);
      // Nor does the connection's https claim earn HSTS.
      const answer = await app.get('/api/v2.1/crm/contacts/', { ...app.staff(), 'X-Forwarded-Proto': 'https' });
      expect(answer.headers.get('strict-transport-security')).toBeNull();
    } finally {
      await app.close();
    }
  });

  test('from the trusted proxy, the address it appended is the client, whatever the client wrote before it', async () => {
    const app = await startTestApp({ ...limits, TRUST_PROXY: '127.0.0.1' });
    try {
      // One client that writes a new X-Forwarded-For each time, which the proxy passes on and appends its peer to.
      const spoofing = [];
      for (let i = 1; i <= 3; i += 1) spoofing.push((await wrongLogin(app, `203.0.113.${i}, 198.51.100.7`)).status);
      expect(spoofing).toEqual([401, 401, 429]);
      // Another client behind the same proxy has its own budget.
      expect((await wrongLogin(app, '198.51.100.8')).status).toBe(401);
      const answer = await app.get('/api/v2.1/crm/contacts/', { ...app.staff(), 'X-Forwarded-Proto': 'https' });
      expect(answer.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    } finally {
      await app.close();
    }
  });
});
