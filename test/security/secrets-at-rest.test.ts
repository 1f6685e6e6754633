import { createHmac, randomBytes } from 'node:crypto';
import { createDeliveryActivities } from '../../activities/delivery-activities';
import { reencryptSecrets } from '../../src/cli/reencrypt-secrets';
import { loadConfig } from '../../src/config';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createLogger } from '../../src/logger';
import { createKeyring, parseSecretsKeys } from '../../src/secrets/keyring';
import { runActivity } from '../support/activity-run';
import { startTestApp, type TestApp } from '../support/test-app';
import { insertEvent } from '../support/webhook-rows';

/*
 * The endpoint's Basic-auth password and signing secret are encrypted in the database under SECRETS_KEYS. Keys
 * rotate without losing a delivery: put the new key first, re-encrypt, drop the old key.
 */

const PASSWORD = 'crm-pässwort-7Q2';
const SIGNING_KEY = Buffer.from('a secret key of thirty-two bytes');
const SIGNING_SECRET = `whsec_${SIGNING_KEY.toString('base64')}`;
const OLD_KEY = randomBytes(32).toString('hex');
const NEW_KEY = randomBytes(32).toString('hex');
const [oldKeyId, newKeyId] = parseSecretsKeys(`${OLD_KEY},${NEW_KEY}`).map((key) => key.id);

let app: TestApp;
let subscriber: Subscriber;
let endpointId: number;

beforeAll(async () => {
  app = await startTestApp({ SECRETS_KEYS: OLD_KEY });
  subscriber = await startSubscriber();
  const saved = await app.request('PUT', '/admin/api/webhook-endpoint', {
    url: subscriber.url,
    basic_auth_username: 'crm',
    basic_auth_password: PASSWORD,
    signing_secret: SIGNING_SECRET,
  });
  expect(saved.status).toBe(200);
  [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
});
afterAll(async () => {
  await subscriber?.close();
  await app?.close();
});

const storedSecrets = () => app.db('webhook_endpoints').where({ id: endpointId }).first('basic_auth_password', 'signing_secret');

/** `SECRETS_KEYS` as an operator would set it, for the command and the worker. */
const withKeys = (keys: string) => loadConfig({ DATABASE_URL: app.databaseUrl, SECRETS_KEYS: keys });

async function reencrypt(keys: string) {
  const lines: string[] = [];
  const code = await reencryptSecrets({ config: withKeys(keys), stdout: (line) => lines.push(line) });
  return { code, output: lines.join('\n') };
}

/** One delivery by a worker holding `keys`: what the subscriber received. */
async function deliverWith(keys: string) {
  subscriber.requests.length = 0;
  const event = await insertEvent(app.db, endpointId);
  const activities = createDeliveryActivities({
    db: app.db,
    log: createLogger('silent'),
    allowPrivateAddresses: true,
    keyring: createKeyring(withKeys(keys).secrets.keys),
  });
  const attempt = { eventId: event.id, attemptNumber: 1, attempt: { kind: 'scheduled', number: 1 } as const, retryDelayMs: null };
  const result = await runActivity(`webhook-event-${event.id}`, activities.attemptDelivery, attempt);
  return { event, result, request: subscriber.requests[0] };
}

function expectTheRightCredentials({ event, result, request }: Awaited<ReturnType<typeof deliverWith>>) {
  expect(result).toMatchObject({ outcome: 'delivered', responseCode: 200 });
  expect(request.headers.authorization).toBe(`Basic ${Buffer.from(`crm:${PASSWORD}`).toString('base64')}`);
  const timestamp = String(request.headers['webhook-timestamp']);
  const expected = createHmac('sha256', SIGNING_KEY).update(`${event.id}.${timestamp}.`).update(request.body).digest('base64');
  expect(request.headers['webhook-signature']).toBe(`v1,${expected}`);
}

test('the database holds neither the password nor the signing secret, only values sealed with the first key', async () => {
  const stored = await storedSecrets();
  expect(stored.basic_auth_password).toMatch(new RegExp(`^enc:v1:${oldKeyId}:`));
  expect(stored.signing_secret).toMatch(new RegExp(`^enc:v1:${oldKeyId}:`));
  const everything = JSON.stringify(await app.db('webhook_endpoints').select());
  for (const secret of [PASSWORD, SIGNING_SECRET, SIGNING_KEY.toString('base64'), Buffer.from(PASSWORD).toString('base64')]) {
    expect(everything).not.toContain(secret);
  }
  expect((await app.request('GET', '/admin/api/webhook-endpoint')).body).toMatchObject({ basic_auth_password_set: true, signing_secret_set: true });
  expectTheRightCredentials(await deliverWith(OLD_KEY));
});

test('rotation: new key first, re-encrypt, old key dropped; deliveries carry the right credentials at every step', async () => {
  // 1. The new key is added in front: new values are sealed with it, old ones still open.
  expectTheRightCredentials(await deliverWith(`${NEW_KEY},${OLD_KEY}`));

  // 2. Re-encrypt: every value is now under the new key.
  expect(await reencrypt(`${NEW_KEY},${OLD_KEY}`)).toEqual({
    code: 0,
    output: `Re-encrypted 2 secret value(s) of 1 webhook endpoint(s); every stored secret is now sealed with key ${newKeyId}.`,
  });
  const stored = await storedSecrets();
  expect(stored.basic_auth_password).toMatch(new RegExp(`^enc:v1:${newKeyId}:`));
  expect(stored.signing_secret).toMatch(new RegExp(`^enc:v1:${newKeyId}:`));
  expect((await reencrypt(`${NEW_KEY},${OLD_KEY}`)).output).toMatch(/^Re-encrypted 0 secret value\(s\)/);

  // 3. The old key is dropped: nothing depends on it.
  expect((await reencrypt(NEW_KEY)).output).toMatch(/^Re-encrypted 0 secret value\(s\)/);
  expectTheRightCredentials(await deliverWith(NEW_KEY));

  // A worker that only has the old key cannot open them: nothing is sent, and the attempt is recorded as failed with
  // the reason (it would fail the same on every retry), so the schedule and max retries apply.
  const withoutTheKey = await deliverWith(OLD_KEY);
  expect(withoutTheKey.result).toMatchObject({
    outcome: 'failed',
    error: `Not sent: webhook_endpoints.basic_auth_password is sealed with key ${newKeyId}, which SECRETS_KEYS does not contain`,
    recorded: { status: 'failed' },
  });
  expect(withoutTheKey.request).toBeUndefined();
});

test('the re-encrypt command changes nothing when one value does not open with the keys given', async () => {
  const before = await storedSecrets();
  expect(await reencrypt(OLD_KEY)).toEqual({
    code: 1,
    output: `Nothing changed: webhook_endpoints.basic_auth_password is sealed with key ${newKeyId}, which SECRETS_KEYS does not contain. Add that key to SECRETS_KEYS (after the first) and run again.`,
  });
  expect(await storedSecrets()).toEqual(before);
});

test('plain values stored before encryption are read as they are and sealed by the re-encrypt command', async () => {
  await app.db('webhook_endpoints').where({ id: endpointId }).update({ basic_auth_password: PASSWORD, signing_secret: SIGNING_SECRET });
  expectTheRightCredentials(await deliverWith(NEW_KEY));
  expect((await reencrypt(NEW_KEY)).output).toMatch(/^Re-encrypted 2 secret value\(s\)/);
  const stored = await storedSecrets();
  expect(stored.basic_auth_password).toMatch(new RegExp(`^enc:v1:${newKeyId}:`));
  expect(JSON.stringify(stored)).not.toContain(PASSWORD);
  expectTheRightCredentials(await deliverWith(NEW_KEY));
});

test('a sealed value copied into the other column does not open there', async () => {
  const { basic_auth_password: sealedPassword } = await storedSecrets();
  await app.db('webhook_endpoints').where({ id: endpointId }).update({ signing_secret: sealedPassword });
  const { result, request } = await deliverWith(NEW_KEY);
  expect(result).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/^Not sent: webhook_endpoints\.signing_secret does not open/) });
  expect(request).toBeUndefined();
});
