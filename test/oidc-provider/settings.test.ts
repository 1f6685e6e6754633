import { readProviderSettings } from '../../src/oidc-provider/settings';

const valid = {
  OIDC_ISSUER: 'http://localhost:8081/',
  OIDC_CLIENT_ID: 'temporal-ui',
  OIDC_CLIENT_SECRET: 'f3a9c1d27b4e8a6059c2d1e7b3a4f8c6',
  OIDC_REDIRECT_URI: 'http://localhost:8080/auth/sso/callback',
  OIDC_STAFF_USERNAME: 'operator',
  OIDC_STAFF_PASSWORD: 'Vt7-qLp2zR9xWm4k',
  OIDC_SIGNING_KEY_FILE: '/var/lib/oidc-provider/signing-key.json',
};

test('reads the settings, the issuer without its trailing slash', () => {
  expect(readProviderSettings(valid)).toMatchObject({ issuer: 'http://localhost:8081', port: 8081, host: '127.0.0.1' });
});

test.each([
  ['OIDC_STAFF_PASSWORD', 'short1234'],
  ['OIDC_STAFF_PASSWORD', 'changemechangemechangeme'],
  ['OIDC_CLIENT_SECRET', ''],
  ['OIDC_ISSUER', 'ftp://localhost:8081'],
  ['OIDC_REDIRECT_URI', 'not a url'],
])('refuses %s=%j, naming it', (name, value) => {
  expect(() => readProviderSettings({ ...valid, [name]: value })).toThrow(name);
});

test('refuses to start without a staff password', () => {
  const { OIDC_STAFF_PASSWORD: _omitted, ...rest } = valid;
  expect(() => readProviderSettings(rest)).toThrow('OIDC_STAFF_PASSWORD');
});
