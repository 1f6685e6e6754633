import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { PRODUCTION_ENV } from '../support/production-env';
import { finished, spawnTypeScript } from '../support/typescript-process';

const MAIN = path.join(__dirname, '..', '..', 'src', 'main.ts');

test('NODE_ENV is development, test or production, exactly; anything else does not start', () => {
  expect(loadConfig({}).production).toBe(false);
  expect(loadConfig({ NODE_ENV: 'development' }).production).toBe(false);
  expect(loadConfig({ NODE_ENV: 'test' }).production).toBe(false);
  expect(loadConfig(PRODUCTION_ENV).production).toBe(true);
  for (const spelling of ['Production', 'PRODUCTION', 'prod', 'production ', ' production', 'staging', 'dev', '']) {
    expect(() => loadConfig({ ...PRODUCTION_ENV, NODE_ENV: spelling })).toThrow(
      'Invalid configuration: NODE_ENV: must be one of development, test, production',
    );
  }
});

test('production requires METRICS_TOKEN, of at least 16 characters', () => {
  const { METRICS_TOKEN: _, ...withoutToken } = PRODUCTION_ENV;
  expect(() => loadConfig(withoutToken)).toThrow('Invalid configuration: METRICS_TOKEN is required when NODE_ENV=production');
  expect(() => loadConfig({ ...PRODUCTION_ENV, METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
  expect(loadConfig(PRODUCTION_ENV).metrics.token).toBe(PRODUCTION_ENV.METRICS_TOKEN);
  // Outside production /metrics may stay open (the embedded default on 127.0.0.1).
  expect(loadConfig({}).metrics.token).toBeUndefined();
});

test('production requires PUBLIC_URL, an origin and nothing more; elsewhere links use the printed address', () => {
  const { PUBLIC_URL: _, ...withoutUrl } = PRODUCTION_ENV;
  expect(() => loadConfig(withoutUrl)).toThrow(/^Invalid configuration: PUBLIC_URL .* is required when NODE_ENV=production/);
  expect(loadConfig(PRODUCTION_ENV).http.publicOrigin).toBe('https://donations.example.org');
  expect(loadConfig({ PUBLIC_URL: 'HTTPS://Donations.Example.org:443/' }).http.publicOrigin).toBe('https://donations.example.org');
  expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8080' }).http.publicOrigin).toBe('http://127.0.0.1:8080');
  expect(loadConfig({}).http.publicOrigin).toBeUndefined();
  for (const value of ['https://donations.example.org/api', 'https://user:pw@donations.example.org', 'https://donations.example.org/?a=1', 'ftp://donations.example.org', 'https://donations.example.org/#x']) {
    expect(() => loadConfig({ PUBLIC_URL: value })).toThrow(/PUBLIC_URL must be http\(s\):\/\/host\[:port\] and nothing more/);
  }
  expect(() => loadConfig({ PUBLIC_URL: 'donations.example.org' })).toThrow(/PUBLIC_URL "donations.example.org" is not a URL/);
});

test('production requires SECRETS_KEYS; elsewhere one key is generated until the start command loads DATA_DIR\'s', () => {
  const { SECRETS_KEYS: _, ...withoutKeys } = PRODUCTION_ENV;
  expect(() => loadConfig(withoutKeys)).toThrow('Invalid configuration: SECRETS_KEYS is required when NODE_ENV=production');
  expect(() => loadConfig({ ...PRODUCTION_ENV, SECRETS_KEYS: 'not-a-key' })).toThrow(
    /^Invalid configuration: SECRETS_KEYS: key 1 is not 32 bytes as 64 hex digits or base64/,
  );
  expect(loadConfig(PRODUCTION_ENV).secrets).toEqual({ keys: [{ id: expect.any(String), key: Buffer.from(PRODUCTION_ENV.SECRETS_KEYS, 'hex') }], generated: false });
  const development = loadConfig({}).secrets;
  expect(development).toEqual({ keys: [{ id: expect.any(String), key: expect.any(Buffer) }], generated: true });
  expect(loadConfig({}).secrets.keys[0].key.equals(development.keys[0].key)).toBe(false);
});

test('the start command refuses such a configuration with exit code 2 and the message, before starting anything', async () => {
  const { METRICS_TOKEN: _, ...withoutToken } = PRODUCTION_ENV;
  const cases = [
    [{ ...PRODUCTION_ENV, NODE_ENV: 'Production' }, 'NODE_ENV: must be one of development, test, production'],
    [withoutToken, 'METRICS_TOKEN is required when NODE_ENV=production'],
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, 'OTEL_TRACES_EXPORTER: must be one of otlp, console, none (one exporter)'],
  ] as const;
  const results = await Promise.all(cases.map(([env]) => finished(spawnTypeScript(MAIN, ['api'], { PATH: process.env.PATH, ...env }))));
  for (const [index, [env, message]] of cases.entries()) {
    expect([env, results[index]]).toEqual([env, { code: 2, stdout: '', stderr: `Invalid configuration: ${message}\n` }]);
  }
});

test('an empty value counts as unset, as Compose passes `${NAME:-}` of a variable nobody set', () => {
  expect(loadConfig({ ...PRODUCTION_ENV, EVENT_RETENTION_DAYS: '30', PAYLOAD_RETENTION_DAYS: '' }).retention).toEqual({ eventDays: 30, payloadDays: 30 });
  expect(loadConfig({ ...PRODUCTION_ENV, TEMPORAL_WORKFLOW_TASK_POLLERS: '' }).temporal.workflowTaskPollers).toBeUndefined();
  expect(() => loadConfig({ ...PRODUCTION_ENV, TEMPORAL_WORKFLOW_TASK_POLLERS: '1' })).toThrow(/TEMPORAL_WORKFLOW_TASK_POLLERS/);
  // Required is still required: empty is as good as missing; an empty NODE_ENV is no environment (test above).
  expect(() => loadConfig({ ...PRODUCTION_ENV, METRICS_TOKEN: '' })).toThrow('METRICS_TOKEN is required when NODE_ENV=production');
});

test('production refuses placeholders that only meet the length, and names each one', () => {
  const weak = {
    'one character': 'a'.repeat(36),
    'a word repeated': 'changeme'.repeat(5),
    'a few characters': 'abcdbcadcabddbacabdcbadcbcadabdcbacd',
    'a pattern of many characters repeated, cut anywhere': 'Tr0ub4dor&3x'.repeat(3) + 'Tr0ub',
  };
  for (const [what, secret] of Object.entries(weak)) {
    const refusal = /^Invalid configuration: JWT secret 1 (uses fewer than 5 different characters|repeats a string of \d+ characters); generate each with openssl rand -hex 32$/;
    const thrown = (() => {
      try {
        loadConfig({ ...PRODUCTION_ENV, JWT_SECRET: secret });
        return 'started';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect({ what, thrown }).toEqual({ what, thrown: expect.stringMatching(refusal) });
  }
  expect(() => loadConfig({ ...PRODUCTION_ENV, METRICS_TOKEN: 'a'.repeat(16), SECRETS_KEYS: '5e'.repeat(32) })).toThrow(
    'Invalid configuration: METRICS_TOKEN uses fewer than 5 different characters; SECRETS_KEYS key 1 has fewer than 16 different bytes; generate each with openssl rand -hex 32',
  );
  expect(() => loadConfig({ ...PRODUCTION_ENV, JWT_SECRETS: `${PRODUCTION_ENV.JWT_SECRET},${'ab'.repeat(20)}` })).toThrow(/JWT secret 2 uses fewer than 5 different characters/);
  // Generated values pass, and development keeps whatever it is given.
  for (let i = 0; i < 200; i++) {
    const generated = {
      JWT_SECRET: randomBytes(32).toString('hex'),
      SECRETS_KEYS: randomBytes(32).toString('base64'),
      // The shortest token METRICS_TOKEN takes: 16 hex digits often repeat some.
      METRICS_TOKEN: randomBytes(8).toString('hex'),
    };
    expect(() => loadConfig({ ...PRODUCTION_ENV, ...generated })).not.toThrow();
  }
  expect(loadConfig({ JWT_SECRET: 'a'.repeat(36) }).auth.jwtSecrets).toEqual(['a'.repeat(36)]);
});
