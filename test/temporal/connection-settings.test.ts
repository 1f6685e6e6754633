import { chmod, copyFile, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { describeTemporalConnection, openTemporalSettings } from '../../src/temporal/connection';
import { explainTemporalConnectionFailure } from '../../src/temporal/connection-failures';
import { MAX_SETTING_FILE_BYTES, temporalConnection } from '../../src/temporal/connection-settings';
import { captureLogs } from '../support/log-capture';
import { createTestAuthority, type PemPair, type TestAuthority } from '../support/certificates';

// The Temporal TLS settings as src/config.ts reads them and src/temporal/connection-settings.ts turns them into connection
// options: every bad configuration is refused at start, naming its setting, and nothing secret is ever repeated.

const DAY_MS = 24 * 60 * 60 * 1000;
const API_KEY = 'tc-api-key-0123456789abcdef';

let dir: string;
let ca: TestAuthority;
let client: PemPair;
const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'temporal-tls-settings-'));
  ca = await createTestAuthority('Settings Test CA');
  client = await ca.issue({ commonName: 'delivery-worker', usage: 'client' });
  const other = await ca.issue({ commonName: 'someone-else', usage: 'client' });
  const expired = await ca.issue({
    commonName: 'delivery-worker-2020',
    usage: 'client',
    notBefore: new Date('2020-01-01T00:00:00Z'),
    notAfter: new Date('2020-02-01T00:00:00Z'),
  });
  const future = await ca.issue({ commonName: 'delivery-worker-2099', usage: 'client', notBefore: new Date(Date.now() + 10 * DAY_MS), notAfter: new Date(Date.now() + 20 * DAY_MS) });
  const files: Record<string, string> = {
    'ca.pem': ca.cert,
    'client.pem': client.cert,
    'client.key': client.key,
    'other.key': other.key,
    'expired.pem': expired.cert,
    'expired.key': expired.key,
    'future.pem': future.cert,
    'future.key': future.key,
    'not-pem.pem': 'this is not a certificate\n',
    'broken.pem': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
    'encrypted.key': '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n',
  };
  for (const [name, content] of Object.entries(files)) await writeFile(file(name), content, { mode: 0o600 });
  // A PEM file with a megabyte of comment after it: the wrong file, or one that grows without end.
  await writeFile(file('huge.pem'), `${ca.cert}${'#'.repeat(MAX_SETTING_FILE_BYTES + 1 - Buffer.byteLength(ca.cert))}`);
  // Devices and FIFOs never end (/dev/zero, /dev/stdin); /dev/null stands for them here, as it ends at once.
  await symlink('/dev/null', file('device.pem'));
  await copyFile(file('client.key'), file('shared.key'));
  await chmod(file('shared.key'), 0o644);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const base = { TEMPORAL_ADDRESS: 'temporal.example:7233' };

describe('src/config.ts', () => {
  test.each([
    ['a certificate without its key', { TEMPORAL_TLS_CERT_FILE: '/c.pem' }, 'TEMPORAL_TLS_CERT_FILE is set without TEMPORAL_TLS_KEY_FILE'],
    ['a key without its certificate', { TEMPORAL_TLS_KEY_FILE: '/c.key' }, 'TEMPORAL_TLS_KEY_FILE is set without TEMPORAL_TLS_CERT_FILE'],
    ['TLS switched off beside a CA file', { TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA_FILE: '/ca.pem' }, 'TEMPORAL_TLS is false, but TEMPORAL_TLS_CA_FILE need TLS'],
    ['TLS switched off beside an API key', { TEMPORAL_TLS: 'no', TEMPORAL_API_KEY: API_KEY }, 'TEMPORAL_TLS is false, but TEMPORAL_API_KEY need TLS'],
    ['an API key with a line break copied along', { TEMPORAL_API_KEY: `${API_KEY}\n` }, 'TEMPORAL_API_KEY: must be printable ASCII without spaces'],
    ['an unknown spelling of on', { TEMPORAL_TLS: 'on' }, 'TEMPORAL_TLS:'],
  ])('refuses %s, naming the setting', (_case, env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(`Invalid configuration: ${message}`);
  });

  test.each([
    ['an API key', { TEMPORAL_API_KEY: API_KEY }, 'TEMPORAL_API_KEY set without TEMPORAL_ADDRESS; the embedded dev server takes plain text only'],
    ['TLS', { TEMPORAL_TLS: 'true' }, 'TEMPORAL_TLS set without TEMPORAL_ADDRESS'],
    ['a client certificate', { TEMPORAL_TLS_CERT_FILE: '/c.pem', TEMPORAL_TLS_KEY_FILE: '/c.key' }, 'TEMPORAL_TLS_CERT_FILE, TEMPORAL_TLS_KEY_FILE set without TEMPORAL_ADDRESS'],
  ])('refuses %s for the embedded dev server (no TEMPORAL_ADDRESS)', (_case, env, message) => {
    expect(() => loadConfig(env)).toThrow(`Invalid configuration: ${message}`);
  });

  test('never repeats the API key in its refusals', () => {
    const refusal = (() => {
      try {
        loadConfig({ TEMPORAL_API_KEY: `${API_KEY} x` });
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(refusal).toMatch(/TEMPORAL_API_KEY/);
    expect(refusal).not.toContain(API_KEY);
  });

  test('TLS is on with TEMPORAL_TLS=true alone, or with any TLS setting or an API key; off otherwise', () => {
    expect(loadConfig(base).temporal.tls).toBeUndefined();
    expect(loadConfig({ ...base, TEMPORAL_TLS: 'false' }).temporal.tls).toBeUndefined();
    expect(loadConfig({ ...base, TEMPORAL_TLS: 'true' }).temporal.tls).toEqual({});
    expect(loadConfig({ ...base, TEMPORAL_API_KEY: API_KEY }).temporal).toMatchObject({ tls: {}, apiKey: API_KEY });
    expect(loadConfig({ ...base, TEMPORAL_TLS_SERVER_NAME: 'ns.tmprl.cloud' }).temporal.tls).toEqual({ serverName: 'ns.tmprl.cloud' });
    // Compose passes an unset optional variable as an empty string: that is no setting, not TLS.
    expect(loadConfig({ ...base, TEMPORAL_TLS: '', TEMPORAL_TLS_CA_FILE: '', TEMPORAL_API_KEY: '' }).temporal.tls).toBeUndefined();
  });
});

describe('src/temporal/connection.ts', () => {
  const settings = (tls: Record<string, string>, apiKey?: string) => ({ tls, apiKey });
  const mtls = () => ({ caFile: file('ca.pem'), certFile: file('client.pem'), keyFile: file('client.key'), serverName: 'temporal.test' });

  test('reads the CA and the client pair into the SDK options, and describes the connection without a secret', () => {
    const { options, facts } = temporalConnection('temporal.example:7233', settings(mtls(), API_KEY));
    expect(options).toEqual({
      address: 'temporal.example:7233',
      apiKey: API_KEY,
      tls: {
        serverNameOverride: 'temporal.test',
        serverRootCACertificate: Buffer.from(`${ca.cert}\n`),
        clientCertPair: { crt: Buffer.from(`${client.cert}\n`), key: Buffer.from(client.key) },
      },
    });
    const line = describeTemporalConnection(facts, 'payments.a1b2c');
    expect(line).toBe('Temporal: temporal.example:7233, namespace payments.a1b2c, TLS on (mTLS, API key), server name temporal.test');
    expect(JSON.stringify(facts) + line).not.toMatch(/PRIVATE KEY|tc-api-key/);
    expect(facts.clientCertificateExpires?.getTime()).toBeGreaterThan(Date.now());
  });

  test.each([
    ['plain text', undefined, undefined, 'Temporal: temporal:7233, namespace default, TLS off'],
    ['TLS with the system roots', {}, undefined, 'Temporal: temporal:7233, namespace default, TLS on'],
    ['an API key', {}, API_KEY, 'Temporal: temporal:7233, namespace default, TLS on (API key)'],
  ])('describes %s', (_case, tls, apiKey, line) => {
    const { options, facts } = temporalConnection('temporal:7233', { tls, apiKey });
    expect(describeTemporalConnection(facts, 'default')).toBe(line);
    expect(options.tls).toEqual(tls);
  });

  test.each([
    ['a CA file that does not exist', () => ({ caFile: file('missing.pem') }), "TEMPORAL_TLS_CA_FILE: cannot read {dir}/missing.pem (ENOENT)"],
    ['a CA file that is a folder', () => ({ caFile: dir }), 'TEMPORAL_TLS_CA_FILE: {dir} is not a regular file'],
    ['a CA file that is a device, through a link', () => ({ caFile: file('device.pem') }), 'TEMPORAL_TLS_CA_FILE: {dir}/device.pem is not a regular file'],
    ['a key file that is a device', () => ({ certFile: file('client.pem'), keyFile: '/dev/null' }), 'TEMPORAL_TLS_KEY_FILE: /dev/null is not a regular file'],
    ['a CA file larger than a megabyte', () => ({ caFile: file('huge.pem') }), `TEMPORAL_TLS_CA_FILE: {dir}/huge.pem has ${MAX_SETTING_FILE_BYTES + 1} bytes, more than the`],
    ['a CA file that is not PEM', () => ({ caFile: file('not-pem.pem') }), 'TEMPORAL_TLS_CA_FILE: {dir}/not-pem.pem holds no PEM certificate'],
    ['a CA file with a broken certificate', () => ({ caFile: file('broken.pem') }), 'TEMPORAL_TLS_CA_FILE: certificate 1 in {dir}/broken.pem cannot be read'],
    ['a client certificate that is not PEM', () => ({ certFile: file('not-pem.pem'), keyFile: file('client.key') }), 'TEMPORAL_TLS_CERT_FILE: {dir}/not-pem.pem holds no PEM certificate'],
    ['a key file that holds a certificate', () => ({ certFile: file('client.pem'), keyFile: file('client.pem') }), 'TEMPORAL_TLS_KEY_FILE: {dir}/client.pem holds no PEM private key'],
    ['an encrypted key', () => ({ certFile: file('client.pem'), keyFile: file('encrypted.key') }), 'TEMPORAL_TLS_KEY_FILE: the private key in {dir}/encrypted.key is encrypted'],
    ['the key of another certificate', () => ({ certFile: file('client.pem'), keyFile: file('other.key') }), 'TEMPORAL_TLS_KEY_FILE: the key in {dir}/other.key is not the private key of the certificate in {dir}/client.pem'],
    ['an expired client certificate', () => ({ certFile: file('expired.pem'), keyFile: file('expired.key') }), 'TEMPORAL_TLS_CERT_FILE: the client certificate in {dir}/expired.pem (CN=delivery-worker-2020) expired on 2020-02-01T00:00:00.000Z'],
    ['a client certificate not valid yet', () => ({ certFile: file('future.pem'), keyFile: file('future.key') }), 'TEMPORAL_TLS_CERT_FILE: the client certificate in {dir}/future.pem is not valid before'],
  ])('refuses %s at start, naming the setting and the file', (_case, tls, message) => {
    expect(() => temporalConnection('temporal:7233', settings(tls()))).toThrow(`Invalid configuration: ${message.replaceAll('{dir}', dir)}`);
  });

  test('logs one line of how it connects, and warns at every start in the last 14 days of the client certificate', () => {
    const config = loadConfig({ ...base, TEMPORAL_NAMESPACE: 'payments.a1b2c', TEMPORAL_TLS_CERT_FILE: file('client.pem'), TEMPORAL_TLS_KEY_FILE: file('client.key'), TEMPORAL_API_KEY: API_KEY });
    const expires = temporalConnection('temporal:7233', config.temporal).facts.clientCertificateExpires!;
    const startAt = (daysBeforeExpiry: number) => {
      const logs = captureLogs();
      openTemporalSettings('temporal.example:7233', config.temporal, logs.log, new Date(expires.getTime() - daysBeforeExpiry * DAY_MS));
      expect(logs.text()).not.toMatch(/PRIVATE KEY|tc-api-key/);
      return logs.entries().map(({ level, msg }) => [level, msg]);
    };
    const line = [30, 'Temporal: temporal.example:7233, namespace payments.a1b2c, TLS on (mTLS, API key)'];
    expect(startAt(15)).toEqual([line]);
    expect(startAt(13)).toEqual([
      line,
      [40, `the Temporal client certificate (TEMPORAL_TLS_CERT_FILE) expires on ${expires.toISOString()}; renew it and restart`],
    ]);
  });

  test('warns at start when the private key file is open to other users of the machine', () => {
    const startWith = (keyFile: string) => {
      const config = loadConfig({ ...base, TEMPORAL_TLS_CERT_FILE: file('client.pem'), TEMPORAL_TLS_KEY_FILE: keyFile });
      const logs = captureLogs();
      openTemporalSettings('temporal.example:7233', config.temporal, logs.log);
      return logs.entries().filter(({ level }) => level === 40).map(({ msg }) => msg);
    };
    expect(startWith(file('client.key'))).toEqual([]);
    expect(startWith(file('shared.key'))).toEqual([
      'the Temporal client key (TEMPORAL_TLS_KEY_FILE) has mode 0644: other users of this machine may read it; make it 0600 or 0400, owned by the user this service runs as',
    ]);
  });

  test("a connection's options logged by mistake show neither the API key nor the private key", () => {
    const { options } = temporalConnection('temporal:7233', settings(mtls(), API_KEY));
    const logs = captureLogs();
    logs.log.info(options, 'options');
    logs.log.info({ connection: options }, 'options, one level down');
    expect(logs.text()).toContain('[redacted]');
    const keyBytes = JSON.stringify(Buffer.from(client.key)).slice(20, 80);
    expect(logs.text()).not.toContain(API_KEY);
    expect(logs.text()).not.toContain(keyBytes);
  });

  test('never repeats a key it could not use', () => {
    const attempts = [
      () => temporalConnection('temporal:7233', settings({ certFile: file('client.pem'), keyFile: file('other.key') })),
      () => temporalConnection('temporal:7233', settings({ certFile: file('client.key'), keyFile: file('client.key') })),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(/Invalid configuration/);
      try {
        attempt();
      } catch (err) {
        expect((err as Error).message).not.toMatch(/PRIVATE KEY-----|MIG/);
      }
    }
  });

  test.each([
    // As the SDK's Rust core (worker) and grpc-js on OpenSSL (clients) report them.
    ['tonic::transport::Error(Transport, ConnectError(Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }))', 'TEMPORAL_TLS_CA_FILE'],
    ['14 UNAVAILABLE: No connection established. Last error: Error: self-signed certificate in certificate chain.', 'TEMPORAL_TLS_CA_FILE'],
    ['error: InvalidCertificate(NotValidForNameContext { expected: DnsName("other.test"), presented: ["DnsName(\\"temporal.test\\")"] })', 'TEMPORAL_TLS_SERVER_NAME'],
    ["Error [ERR_TLS_CERT_ALTNAME_INVALID]: Hostname/IP does not match certificate's altnames: Host: other.test.", 'TEMPORAL_TLS_SERVER_NAME'],
    ['hyper::Error(Io, Custom { kind: InvalidData, error: "received fatal alert: CertificateRequired" })', 'TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE'],
    ['ssl3_read_bytes:tlsv13 alert certificate required:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 116', 'TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE'],
    ['error: "received fatal alert: BadCertificate"', 'the server refused the client certificate'],
    ['error: InvalidCertificate(Expired)', "the server's certificate has expired"],
    ['14 UNAVAILABLE: No connection established. Last error: Error: certificate has expired.', "the server's certificate has expired"],
  ])('tells which setting explains %s', (message, setting) => {
    expect(explainTemporalConnectionFailure(message, { tls: true })).toContain(setting);
  });

  test('reads a connection closed at once as a refused client certificate with TLS, and as a frontend expecting TLS without', () => {
    const closed = 'hyper::Error(Io, Custom { kind: BrokenPipe, error: "stream closed because of a broken pipe" })';
    expect(explainTemporalConnectionFailure(closed, { tls: true })).toMatch(/client certificate it does not accept: TEMPORAL_TLS_CERT_FILE/);
    expect(explainTemporalConnectionFailure(closed, { tls: false })).toMatch(/a frontend with TLS does with a plain-text client: TEMPORAL_TLS/);
  });

  test('explains nothing it does not recognise', () => {
    const refused = '14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7233';
    expect(explainTemporalConnectionFailure(refused, { tls: true })).toBeUndefined();
    expect(explainTemporalConnectionFailure(refused, { tls: false })).toBeUndefined();
  });
});
