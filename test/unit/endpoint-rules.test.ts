import { applyEndpointChange, CREDENTIALS_FOR_NEW_ORIGIN_PROBLEM, normaliseEventSelection } from '../../src/webhook-endpoint/endpoint-rules';
import { isPrivateAddress, type UrlPolicy, urlProblem } from '../../src/webhooks/subscriber-url';
import type { EndpointSettings } from '../../src/webhook-endpoint/endpoint-store';

const production: UrlPolicy = { allowHttpToLoopback: false, allowPrivateAddresses: false };
const development: UrlPolicy = { allowHttpToLoopback: true, allowPrivateAddresses: true };

describe('subscriber URL', () => {
  test('a public HTTPS URL is fine everywhere', () => {
    expect(urlProblem('https://crm.example.org/hooks?source=donations', production)).toBeUndefined();
    expect(urlProblem('https://crm.example.org:8443/hooks', development)).toBeUndefined();
  });

  test('plain http only to loopback, and only when development allows it', () => {
    expect(urlProblem('http://crm.example.org/hooks', development)).toBe('url: must use https');
    expect(urlProblem('http://127.0.0.1:4000/hooks', development)).toBeUndefined();
    expect(urlProblem('http://localhost:4000/hooks', development)).toBeUndefined();
    expect(urlProblem('http://[::1]:4000/hooks', development)).toBeUndefined();
    expect(urlProblem('http://127.0.0.1:4000/hooks', production)).toBe('url: must use https');
  });

  test('production refuses every address form of a URL host that is not global unicast', () => {
    for (const url of [
      'https://127.0.0.1/hooks',
      'https://localhost/hooks',
      'https://api.localhost/hooks',
      'https://10.1.2.3/hooks',
      'https://172.20.0.5/hooks',
      'https://192.168.1.10/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://0.0.0.0/hooks',
      'https://0/hooks',
      // IPv4 spelled as one number, in octal, in hex, shortened, percent-encoded, in full-width digits.
      'https://2130706433/hooks',
      'https://017700000001/hooks',
      'https://0177.0.0.1/hooks',
      'https://0x7f000001/hooks',
      'https://0x7f.1/hooks',
      'https://127.1/hooks',
      'https://%31%32%37.0.0.1/hooks',
      'https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/hooks',
      'https://4294967295/hooks',
      'https://[::1]/hooks',
      'https://[0:0:0:0:0:0:0:1]/hooks',
      'https://[::]/hooks',
      'https://[fd00::1]/hooks',
      'https://[fd00:ec2::254]/hooks',
      'https://[fe80::1]/hooks',
      // IPv4-mapped, in both notations, whether the embedded address is private or public.
      'https://[::ffff:10.0.0.1]/hooks',
      'https://[::ffff:127.0.0.1]/hooks',
      'https://[::ffff:7f00:1]/hooks',
      'https://[0:0:0:0:0:ffff:127.0.0.1]/hooks',
      'https://[::ffff:8.8.8.8]/hooks',
      'https://[::127.0.0.1]/hooks', // IPv4-compatible (deprecated)
      'https://[64:ff9b::7f00:1]/hooks', // NAT64
      'https://[64:ff9b:1::a9fe:a9fe]/hooks', // local-use NAT64
      'https://[2001::7f00:1]/hooks', // Teredo
      'https://[2002:7f00:1::1]/hooks', // 6to4 of 127.0.0.1
      'https://[100::1]/hooks', // discard
      'https://[ff02::1]/hooks', // multicast
      'https://[2001:db8::1]/hooks', // documentation
      'https://[3fff::1]/hooks', // documentation
    ]) {
      expect([url, urlProblem(url, production)]).toEqual([url, 'url: must point to a public (global unicast) address']);
    }
    expect(urlProblem('https://172.32.0.1/hooks', production)).toBeUndefined();
    expect(urlProblem('https://[2606:4700:4700::1111]/hooks', production)).toBeUndefined();
  });

  test('a zone id in a URL host is not a URL at all', () => {
    for (const url of ['https://[fe80::1%25eth0]/hooks', 'https://[fe80::1%eth0]/hooks', 'https://[2606:4700::1%251]/hooks']) {
      expect([url, urlProblem(url, production)]).toEqual([url, expect.stringMatching(/must be a complete URL/)]);
    }
  });

  test('other schemes, credentials in the URL and garbage are refused', () => {
    expect(urlProblem('ftp://crm.example.org/', development)).toBe('url: must use https');
    expect(urlProblem('file:///etc/passwd', development)).toBe('url: must use https');
    expect(urlProblem('https://user:secret@crm.example.org/', development)).toMatch(/must not contain credentials/);
    expect(urlProblem('crm.example.org/hooks', development)).toMatch(/must be a complete URL/);
    expect(urlProblem(`https://crm.example.org/${'a'.repeat(2100)}`, development)).toMatch(/at most 2048/);
  });

  test('what the URL parser would silently change is refused: control characters, backslashes, odd forms, user info', () => {
    const cases: Record<string, RegExp> = {
      'https://crm.example.org/ho\toks': /control characters/,
      '\thttps://crm.example.org/hooks': /control characters/,
      'https://crm.example.org/hooks\r\n': /control characters/,
      'https://crm.exa\nmple.org/hooks': /control characters/,
      'https://crm.example.org/hooks\u0085': /control characters/,
      'https://crm.example.org/\u007f': /control characters/,
      'https://crm.example.org\\@evil.example/': /backslash/,
      'https:\\\\crm.example.org/': /backslash/,
      'https://crm.example.org\\hooks': /backslash/,
      'https:8.8.8.8/': /written as https:\/\/ and the host/,
      'https:crm.example.org/hooks': /written as https:\/\/ and the host/,
      'https:/crm.example.org/hooks': /written as https:\/\/ and the host/,
      'https:///crm.example.org/hooks': /written as https:\/\/ and the host/,
      'https://@crm.example.org/hooks': /must not contain credentials/,
      'https://:@crm.example.org/hooks': /must not contain credentials/,
      'https://crm@crm.example.org/hooks': /must not contain credentials/,
      'https://a@b@crm.example.org/hooks': /must not contain credentials/,
      'https://crm.example.org/hooks#': /fragment/,
      'https://crm.example.org/hooks#top': /fragment/,
      'https://crm.example.org:0/hooks': /port 0/,
      'https://crm.example.org:00/hooks': /port 0/,
      'https://crm.example.org:65536/hooks': /must be a complete URL/,
    };
    for (const [url, problem] of Object.entries(cases)) {
      expect([url, urlProblem(url, development)]).toEqual([url, expect.stringMatching(problem)]);
    }
    expect(urlProblem('https://crm.example.org/hooks/@me?to=a@b', production)).toBeUndefined();
  });

  test('an accepted URL is stored as the parser normalises it', () => {
    const rules = { urlPolicy: production, cartLogic: false };
    for (const [typed, stored] of [
      ['HTTPS://CRM.Example.ORG:443/a/../hooks?x=1', 'https://crm.example.org/hooks?x=1'],
      [' https://crm.example.org ', 'https://crm.example.org/'],
      ['https://bücher.example/hooks', 'https://xn--bcher-kva.example/hooks'],
      ['https://crm.example.org/a b/ä', 'https://crm.example.org/a%20b/%C3%A4'],
      ['https://crm.example.org.:8443/hooks', 'https://crm.example.org.:8443/hooks'],
    ]) {
      expect(urlProblem(typed, production)).toBeUndefined();
      expect([typed, applyEndpointChange(undefined, { url: typed }, rules)]).toEqual([typed, { settings: expect.objectContaining({ url: stored }) }]);
    }
  });

  test('isPrivateAddress is the check a DNS-resolving delivery can reuse', () => {
    expect(isPrivateAddress('10.0.0.1')).toBe(true);
    expect(isPrivateAddress('::ffff:192.168.0.1')).toBe(true);
    expect(isPrivateAddress('fe80::1%eth0')).toBe(true);
    expect(isPrivateAddress('2606:4700::1%eth0')).toBe(true);
    expect(isPrivateAddress('8.8.8.8')).toBe(false);
    expect(isPrivateAddress('not-an-ip')).toBe(false);
  });
});

describe('endpoint settings', () => {
  const rules = { urlPolicy: development, cartLogic: false };

  test('a new endpoint gets v1, active, and the three preselected events', () => {
    expect(applyEndpointChange(undefined, { url: 'https://crm.example.org/hooks' }, rules)).toEqual({
      settings: {
        url: 'https://crm.example.org/hooks',
        active: true,
        payload_version: 'v1',
        events: ['donation.completed', 'donation.recurring_completed', 'shop_order.completed'],
        basic_auth_username: null,
        basic_auth_password: null,
        signing_secret: null,
      },
    });
  });

  test('a new endpoint needs a URL', () => {
    expect(applyEndpointChange(undefined, { active: true }, rules)).toEqual({ problems: ['url: required for a new endpoint'] });
  });

  test('v2.1 is refused without the cart logic and accepted with it', () => {
    const change = { url: 'https://crm.example.org/hooks', payload_version: 'v2.1' as const };
    expect(applyEndpointChange(undefined, change, rules)).toEqual({
      problems: ['payload_version: v2.1 can only be chosen when the cart logic of the donation shop is switched on'],
    });
    expect(applyEndpointChange(undefined, change, { ...rules, cartLogic: true })).toMatchObject({
      settings: { payload_version: 'v2.1' },
    });
  });

  const current: EndpointSettings = {
    url: 'https://crm.example.org/hooks',
    active: true,
    payload_version: 'v2.1',
    events: ['donation.completed'],
    basic_auth_username: 'crm',
    basic_auth_password: 'secret',
    signing_secret: 'whsec_abcdefghijklmnop',
  };

  test('absent fields keep their value, so write-only credentials survive an edit; null clears them', () => {
    expect(applyEndpointChange(current, { active: false }, rules)).toEqual({ settings: { ...current, active: false } });
    expect(applyEndpointChange(current, { basic_auth_username: null, basic_auth_password: null, signing_secret: null }, rules)).toEqual({
      settings: { ...current, basic_auth_username: null, basic_auth_password: null, signing_secret: null },
    });
  });

  test('an endpoint keeps v2.1 when the cart logic was switched off later, unless it changes version', () => {
    expect(applyEndpointChange(current, { payload_version: 'v2.1' }, rules)).toMatchObject({ settings: { payload_version: 'v2.1' } });
    expect(applyEndpointChange({ ...current, payload_version: 'v1' }, { payload_version: 'v2.1' }, rules)).toHaveProperty('problems');
  });

  test('user name and password go together', () => {
    expect(applyEndpointChange(current, { basic_auth_password: null }, rules)).toEqual({
      problems: ['basic_auth_username and basic_auth_password: set both or neither'],
    });
  });

  describe('credentials follow the origin', () => {
    const refused = { problems: [CREDENTIALS_FOR_NEW_ORIGIN_PROBLEM] };

    test('a URL on the same origin keeps them, however the origin is spelled', () => {
      for (const url of [
        'https://crm.example.org/other/path?x=1',
        'https://CRM.Example.ORG/hooks',
        'https://crm.example.org:443/hooks',
      ]) {
        expect([url, applyEndpointChange(current, { url }, rules)]).toEqual([url, { settings: { ...current, url: new URL(url).href } }]);
      }
    });

    test('another scheme, host or port without the password is refused', () => {
      for (const url of [
        'https://crm.example.net/hooks',
        'https://other.crm.example.org/hooks',
        'https://crm.example.org:8443/hooks',
        'https://crm.example.org./hooks',
        'http://127.0.0.1/hooks',
      ]) {
        expect([url, applyEndpointChange(current, { url }, rules)]).toEqual([url, refused]);
        expect([url, applyEndpointChange(current, { url, basic_auth_username: 'crm' }, rules)]).toEqual([url, refused]);
        expect([url, applyEndpointChange(current, { url, signing_secret: 'whsec_0123456789abcdef' }, rules)]).toEqual([url, refused]);
      }
      const local = { ...current, url: 'http://127.0.0.1:4000/hooks' };
      expect(applyEndpointChange(local, { url: 'http://127.0.0.1:4001/hooks' }, rules)).toEqual(refused);
      expect(applyEndpointChange(local, { url: 'http://localhost:4000/hooks' }, rules)).toEqual(refused);
    });

    test('another origin with new credentials, or with none, is accepted; the signing secret stays', () => {
      const url = 'https://crm.example.net/hooks';
      expect(applyEndpointChange(current, { url, basic_auth_password: 'new-secret' }, rules)).toEqual({
        settings: { ...current, url, basic_auth_password: 'new-secret' },
      });
      expect(applyEndpointChange(current, { url, basic_auth_username: 'crm2', basic_auth_password: 'new-secret' }, rules)).toEqual({
        settings: { ...current, url, basic_auth_username: 'crm2', basic_auth_password: 'new-secret' },
      });
      expect(applyEndpointChange(current, { url, basic_auth_username: null, basic_auth_password: null }, rules)).toEqual({
        settings: { ...current, url, basic_auth_username: null, basic_auth_password: null },
      });
      const withoutCredentials = { ...current, basic_auth_username: null, basic_auth_password: null };
      expect(applyEndpointChange(withoutCredentials, { url }, rules)).toEqual({ settings: { ...withoutCredentials, url } });
    });
  });

  test('every problem is reported at once', () => {
    const result = applyEndpointChange(undefined, { url: 'http://crm.example.org', payload_version: 'v2.1', basic_auth_username: 'x' }, rules);
    expect(result).toEqual({ problems: [expect.stringMatching(/^url/), expect.stringMatching(/^payload_version/), expect.stringMatching(/^basic_auth/)] });
  });

  test('the event selection is kept once each, in the canonical order', () => {
    expect(normaliseEventSelection(['shop_order.completed', 'donation.completed', 'shop_order.completed'])).toEqual([
      'donation.completed',
      'shop_order.completed',
    ]);
  });
});
