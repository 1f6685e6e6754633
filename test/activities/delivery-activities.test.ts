import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';
import { createDeliveryActivities } from '../../activities/delivery-activities';
import type { DeliveryActivities } from '../../src/delivery-rules/activity-contracts';
import { createDb, type Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { createMetrics } from '../../src/observability/metrics';
import { readInstallation } from '../../src/webhook-events/installation';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { type ReceivedRequest, type Reply, startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createKeyring, generateSecretKey } from '../../src/secrets/keyring';
import { sealEndpointSecrets } from '../../src/webhook-endpoint/endpoint-store';
import { spellingsOf } from '../support/secret-spellings';
import { startTcpProxy } from '../support/tcp-proxy';
import { findEventWithAttempts } from '../../src/webhook-events/admin-queries';
import { attemptRows, attemptStartRows, eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

const releaseInPackageJson = (JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

const log = createLogger('silent');
const signedAt = new Date('2025-07-15T10:30:00Z');
const failed = { outcome: 'failed' as const, responseCode: 503, error: null, startedAtMs: signedAt.getTime(), durationMs: 12 };
const FIVE_MINUTES = 5 * 60_000;
/** The first scheduled attempt of an event, as the workflow asks for it. */
const firstAttempt = (eventId: number) => ({ eventId, attemptNumber: 1, attempt: { kind: 'scheduled', number: 1 } as const, retryDelayMs: FIVE_MINUTES });

let db: Db;
let dbUrl: string;
let activities: DeliveryActivities;
let subscriber: Subscriber;
let replies: (request: ReceivedRequest) => Reply | Promise<Reply>;

// Activity failures are asserted below; the SDK's own logging of them would only clutter the output.
const quietSdkLogger = new DefaultLogger('ERROR');
const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> =>
  new MockActivityEnvironment(
    { workflowExecution: { workflowId: 'webhook-event-test', runId: 'run' } },
    { logger: quietSdkLogger },
  ).run(fn, ...args) as Promise<R>;

beforeAll(async () => {
  ({ db, url: dbUrl } = await createTestDatabase());
  // 30 s would make the time-limit tests slow; much less than 2 s makes every test here fail on a loaded machine.
  activities = createDeliveryActivities({ db, log, http: { timeoutMs: 2000 }, clock: () => signedAt, allowPrivateAddresses: true, keyring: TEST_KEYRING });
  subscriber = await startSubscriber({ reply: (request) => replies(request) });
});

beforeEach(() => {
  replies = () => ({ status: 200, body: 'ok' });
  subscriber.requests.length = 0;
});

afterAll(async () => {
  await subscriber?.close();
  await db?.destroy();
});

/** What was stored of the subscriber's answer to the event's first attempt. */
const storedBody = async (eventId: number) => (await attemptRows(db, eventId))[0]?.response_body;

async function newEvent(endpoint: Partial<Parameters<typeof insertEndpoint>[1]> = {}) {
  const endpointId = await insertEndpoint(db, { url: subscriber.url, ...endpoint });
  return insertEvent(db, endpointId);
}

describe('attemptDelivery', () => {
  test('POSTs the stored bytes as JSON with a User-Agent and basic auth, without signature headers when no secret is set', async () => {
    const event = await newEvent({ basicAuth: { username: 'crm', password: 'pässwort:1' } });
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));

    expect(result).toMatchObject({ outcome: 'delivered', responseCode: 200, error: null });
    expect(result.startedAtMs).toBe(signedAt.getTime());
    expect(await storedBody(event.id)).toBe('ok');
    const [request] = subscriber.requests;
    expect(request.method).toBe('POST');
    expect(request.body.toString('utf8')).toBe(event.payload);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe(`donation-webhooks/${releaseInPackageJson} (webhook delivery)`);
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('crm:pässwort:1').toString('base64')}`);
    expect(request.headers['webhook-signature']).toBeUndefined();
    expect(request.headers['webhook-id']).toBeUndefined();
  });

  test('signs with Standard Webhooks headers when the endpoint has a signing secret', async () => {
    const key = Buffer.from('a secret key of thirty-two bytes');
    const event = await newEvent({ signingSecret: `whsec_${key.toString('base64')}` });
    await run(activities.attemptDelivery, firstAttempt(event.id));

    const [request] = subscriber.requests;
    const timestamp = String(signedAt.getTime() / 1000);
    expect(request.headers['webhook-id']).toBe(String(event.id));
    expect(request.headers['webhook-timestamp']).toBe(timestamp);
    const expected = createHmac('sha256', key).update(`${event.id}.${timestamp}.`).update(request.body).digest('base64');
    expect(request.headers['webhook-signature']).toBe(`v1,${expected}`);
    expect(request.headers.authorization).toBeUndefined();
  });

  test('does not follow a redirect: one request, a failed attempt naming the target', async () => {
    replies = (request) =>
      request.path === '/webhooks' ? { status: 302, headers: { location: '/moved' }, body: 'see /moved' } : { status: 200 };
    const event = await newEvent();
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));

    expect(result).toMatchObject({ outcome: 'failed', responseCode: 302 });
    expect(await storedBody(event.id)).toBe('see /moved');
    expect(result.error).toBe('Redirect not followed (Location: /moved)');
    expect(subscriber.requests.map((r) => r.path)).toEqual(['/webhooks']);
  });

  test('a non-2xx answer is a failed attempt with its code and body', async () => {
    replies = () => ({ status: 500, body: '{"error":"database locked"}' });
    const event = await newEvent();
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(result).toMatchObject({ outcome: 'failed', responseCode: 500, error: null });
    expect(await storedBody(event.id)).toBe('{"error":"database locked"}');
  });

  test('an answer after the time limit is a failure (limit scaled down to 2 s for the test)', async () => {
    replies = () => ({ status: 200, body: 'too late', delayMs: 2500 });
    const event = await newEvent();
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(result).toMatchObject({ outcome: 'failed', responseCode: null, error: 'No response within 2 s' });
    expect(await storedBody(event.id)).toBeNull();
  });

  test('a 2xx status line in time counts even if the body is still trickling in at the limit', async () => {
    replies = () => ({ status: 200, body: 'late body', bodyDelayMs: 2500 });
    const event = await newEvent();
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(result).toMatchObject({ outcome: 'delivered', responseCode: 200 });
    expect(await storedBody(event.id)).toBe('');
  });

  test('reads at most 16 KiB of a huge answer, and survives invalid UTF-8 and NUL bytes', async () => {
    const huge = Buffer.concat([Buffer.from([0xc3, 0x28, 0x00]), Buffer.alloc(8 * 1024 * 1024, 'x')]);
    replies = () => ({ status: 400, body: huge });
    const event = await newEvent();
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));

    expect(result.outcome).toBe('failed');
    // Postgres takes the stored form as it is.
    const body = (await storedBody(event.id))!;
    expect(body.startsWith('\uFFFD(\uFFFDxxx')).toBe(true);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(16 * 1024 + 4);
    expect((await eventRow(db, event.id)).last_response_body).toBe(body);
  });

  test('a refused connection is a failed attempt', async () => {
    const event = await newEvent({ url: `http://127.0.0.1:${await freePort()}/webhooks` });
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(result).toMatchObject({ outcome: 'failed', responseCode: null });
    expect(result.error).toMatch(/^Connection error: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });

  test('a stored URL with port 0 (saved before it was refused) is not sent to the default port instead', async () => {
    const event = await newEvent({ url: 'http://127.0.0.1:0/webhooks' });
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(result).toMatchObject({ outcome: 'failed', error: 'Not sent: the endpoint URL has port 0', recorded: { status: 'failed' } });
  });

  test('sends nothing while the endpoint is switched off, and counts the attempt as failed', async () => {
    const event = await newEvent({ active: false });
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(result).toMatchObject({ outcome: 'failed', error: 'Not sent: the webhook endpoint is switched off' });
    expect(subscriber.requests).toHaveLength(0);
  });

  test('a stored signing secret that cannot sign fails the attempt with its reason, recorded; nothing is sent', async () => {
    // Saved before the PUT refused such secrets: base64 that Node decodes to an empty key.
    const event = await newEvent({ signingSecret: 'whsec_=================' });
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));

    const reason = 'Not sent: the signing secret decodes to an empty key; set a new one (whsec_ and the base64 of 24 or more random bytes)';
    expect(result).toMatchObject({ outcome: 'failed', responseCode: null, error: reason, recorded: { status: 'failed' } });
    expect(result.recorded?.nextAttemptAtMs).toBe(result.startedAtMs + result.durationMs + FIVE_MINUTES);
    expect(await eventRow(db, event.id)).toMatchObject({ status: 'failed', attempts: 1, last_error: reason });
    expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, outcome: 'failed', error: reason }]);
    // The start written with the event's read is taken back by the failed outcome: no interrupted attempt is shown.
    expect(await attemptStartRows(db, event.id)).toEqual([]);
    expect(subscriber.requests).toHaveLength(0);
  });

  test('secrets sealed with a key no longer in SECRETS_KEYS fail the attempt, naming column and key, never a value', async () => {
    const event = await newEvent({ basicAuth: { username: 'crm', password: 'pw-under-the-old-key' }, signingSecret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` });
    const otherKey = createKeyring([generateSecretKey()]);
    const withoutTheKey = createDeliveryActivities({ db, log, http: { timeoutMs: 2000 }, clock: () => signedAt, allowPrivateAddresses: true, keyring: otherKey });
    const result = await run(withoutTheKey.attemptDelivery, firstAttempt(event.id));

    const keyId = TEST_KEYRING.sealingKeyId;
    const reason = `Not sent: webhook_endpoints.basic_auth_password is sealed with key ${keyId}, which SECRETS_KEYS does not contain`;
    expect(result).toMatchObject({ outcome: 'failed', error: reason, recorded: { status: 'failed' } });
    expect(await eventRow(db, event.id)).toMatchObject({ status: 'failed', last_error: reason });
    expect(subscriber.requests).toHaveLength(0);
  });

  test('a switched-off endpoint is named as the reason even when its secrets would not open', async () => {
    const event = await newEvent({ active: false, signingSecret: 'whsec_=================' });
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(result).toMatchObject({ outcome: 'failed', error: 'Not sent: the webhook endpoint is switched off' });
  });

  test('a subscriber that echoes our credentials in every spelling gets none of them into the stored answer', async () => {
    const password = 'Pässwort "mit" Leer/zeichen & 1+1';
    const key = Buffer.from('a signing key of thirty-two byte');
    const signingSecret = `whsec_${key.toString('base64')}`;
    // It echoes what it received (the Basic header, and the password in it) and what it was configured with.
    replies = (request) => {
      const header = String(request.headers.authorization).slice('Basic '.length);
      const received = Buffer.from(header, 'base64').toString('utf8').slice('crm:'.length);
      const echoed = { password: received, header, 'signing secret': signingSecret, 'signing key': key.toString('base64') };
      const lines = Object.entries(echoed).flatMap(([what, secret]) => Object.entries(spellingsOf(secret)).map(([form, spelling]) => `${what}, ${form}: ${spelling}`));
      return { status: 401, body: lines.join('\n') };
    };
    const event = await newEvent({ basicAuth: { username: 'crm', password }, signingSecret });
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));

    expect(result).toMatchObject({ outcome: 'failed', responseCode: 401 });
    const stored = (await storedBody(event.id)) as string;
    const lines = stored.split('\n');
    expect(lines.length).toBe(4 * Object.keys(spellingsOf(password)).length);
    for (const line of lines) expect(line).toMatch(/^[^:]+: \[redacted\]$/);
    expect((await eventRow(db, event.id)).last_response_body).toBe(stored);
  });

  test('credentials changed on the endpoint between attempts: the next attempt signs with, sends and cuts out the new ones', async () => {
    const credentials = (password: string) => `Basic ${Buffer.from(`crm:${password}`).toString('base64')}`;
    const [firstKey, secondKey] = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const sealed = (secrets: { basic_auth_password?: string; signing_secret?: string }) =>
      Object.fromEntries(
        Object.entries(sealEndpointSecrets({ basic_auth_password: null, signing_secret: null, ...secrets }, TEST_KEYRING)).filter(([column]) => column in secrets),
      );
    replies = (request) => ({ status: 500, body: `you sent ${String(request.headers.authorization)}` });
    const endpointId = await insertEndpoint(db, {
      url: subscriber.url,
      basicAuth: { username: 'crm', password: 'first password' },
      signingSecret: `whsec_${firstKey.toString('base64')}`,
    });
    const event = await insertEvent(db, endpointId);
    const attempt = (attemptNumber: number) => run(activities.attemptDelivery, { ...firstAttempt(event.id), attemptNumber });
    await attempt(1);
    // One column at a time: the signing secret, then the password.
    await db('webhook_endpoints').where({ id: endpointId }).update(sealed({ signing_secret: `whsec_${secondKey.toString('base64')}` }));
    await attempt(2);
    await db('webhook_endpoints').where({ id: endpointId }).update(sealed({ basic_auth_password: 'second password' }));
    await attempt(3);

    const signedWith = (key: Buffer, body: Buffer) =>
      `v1,${createHmac('sha256', key).update(`${event.id}.${signedAt.getTime() / 1000}.`).update(body).digest('base64')}`;
    const [first, second, third] = subscriber.requests;
    expect([first, second, third].map((request) => request.headers['webhook-signature'])).toEqual([
      signedWith(firstKey, first.body),
      signedWith(secondKey, second.body),
      signedWith(secondKey, third.body),
    ]);
    expect([first, second, third].map((request) => request.headers.authorization)).toEqual([
      credentials('first password'),
      credentials('first password'),
      credentials('second password'),
    ]);
    expect((await attemptRows(db, event.id)).map((row) => row.response_body)).toEqual(Array(3).fill('you sent Basic [redacted]'));
  });

  test('credentials sealed again with a key the worker lacks, after an attempt that opened them: nothing is sent', async () => {
    const endpointId = await insertEndpoint(db, { url: subscriber.url, basicAuth: { username: 'crm', password: 'a password' } });
    const event = await insertEvent(db, endpointId);
    await run(activities.attemptDelivery, firstAttempt(event.id));
    const unknownKey = createKeyring([generateSecretKey()]);
    await db('webhook_endpoints')
      .where({ id: endpointId })
      .update(sealEndpointSecrets({ basic_auth_password: 'a password', signing_secret: null }, unknownKey));
    const result = await run(activities.attemptDelivery, { ...firstAttempt(event.id), attemptNumber: 2 });

    expect(result).toMatchObject({ outcome: 'failed', error: expect.stringContaining(`sealed with key ${unknownKey.sealingKeyId}`) });
    expect(subscriber.requests).toHaveLength(1);
  });

  test('the signing key echoed as base64url, unpadded base64 or hex (any case) is cut out too', async () => {
    // Bytes whose base64 has + and / and padding, so that each spelling differs from the secret's own base64.
    const key = Buffer.from(Array.from({ length: 32 }, (_, index) => (0xfb + index * 0x3f) & 0xff));
    expect(key.toString('base64')).toMatch(/[+/].*=$/);
    const plain = 'a plain shared secret, its UTF-8 bytes the key';
    for (const [signingSecret, keyBytes] of [[`whsec_${key.toString('base64')}`, key], [plain, Buffer.from(plain)]] as const) {
      const spellings = [keyBytes.toString('base64url'), keyBytes.toString('base64').replace(/=+$/, ''), keyBytes.toString('hex'), keyBytes.toString('hex').toUpperCase()];
      replies = () => ({ status: 401, body: spellings.map((spelling) => `key: ${spelling}`).join('\n') });
      const event = await newEvent({ signingSecret });
      await run(activities.attemptDelivery, firstAttempt(event.id));
      const stored = (await storedBody(event.id)) as string;
      expect([signingSecret, stored]).toEqual([signingSecret, spellings.map(() => 'key: [redacted]').join('\n')]);
    }
  });

  test('an echo that the 16 KiB limit, the deadline or a broken connection cut leaves nothing of the password', async () => {
    const password = 'correct-horse-battery-staple';
    const filler = 'x'.repeat(16 * 1024 - 10);
    // Each answer stops ten characters into the password, however it stops.
    const cuts: Record<string, (res: http.ServerResponse) => void> = {
      'the limit of a stored answer': (res) => res.end(`${filler}${password}`),
      'the deadline': (res) => res.write(`pw=${password.slice(0, 10)}`),
      'a connection that broke off': (res) => res.write(`pw=${password.slice(0, 10)}`, () => res.socket?.destroy()),
    };
    let current = '';
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'text/plain' });
      cuts[current](res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
      for (const cut of Object.keys(cuts)) {
        current = cut;
        const event = await newEvent({ url, basicAuth: { username: 'crm', password } });
        await run(activities.attemptDelivery, firstAttempt(event.id));
        const stored = (await storedBody(event.id)) as string;
        expect([cut, stored.replace(filler, '<filler>')]).toEqual([cut, cut === 'the limit of a stored answer' ? '<filler>[redacted]' : 'pw=[redacted]']);
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('an attempt already recorded is reported as recorded and not sent again', async () => {
    const event = await newEvent();
    const first = await run(activities.attemptDelivery, firstAttempt(event.id));
    const again = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(again).toEqual(first);
    expect(subscriber.requests).toHaveLength(1);
    expect(await attemptStartRows(db, event.id)).toEqual([]);
  });

  describe("a workflow of another installation or event (issue 20, P2): nothing sent, nothing recorded, retried", () => {
    test.each([
      ['another installation (a database sharing the task queue)', async (key: string) => ({ installation: randomUUID(), key }), /belongs to installation/],
      ['another event of the same id', async () => ({ installation: await readInstallation(db), key: randomUUID() }), /carries event key/],
    ])('%s', async (_, ownerOf, reason) => {
      const metrics = createMetrics();
      const guarded = createDeliveryActivities({ db, log, metrics, allowPrivateAddresses: true, keyring: TEST_KEYRING });
      const event = await newEvent();
      const owner = await ownerOf((await eventRow(db, event.id)).uuid);
      const attempt = run(guarded.attemptDelivery, { ...firstAttempt(event.id), owner });
      await expect(attempt).rejects.toThrow(reason);
      await expect(attempt).rejects.toMatchObject({ type: 'ForeignDeliveryWorkflow', nonRetryable: false });
      const recording = run(guarded.recordAttempt, {
        ...firstAttempt(event.id),
        owner,
        attempt: { kind: 'scheduled', number: 1, outcome: 'delivered' },
        result: { outcome: 'delivered', responseCode: 200, error: null, startedAtMs: 0, durationMs: 1 },
      });
      await expect(recording).rejects.toMatchObject({ type: 'ForeignDeliveryWorkflow', nonRetryable: false });
      expect(subscriber.requests).toHaveLength(0);
      expect(await attemptRows(db, event.id)).toEqual([]);
      expect(await attemptStartRows(db, event.id)).toEqual([]);
      // Not marked started either: the relay still starts the event's own workflow.
      expect(await eventRow(db, event.id)).toMatchObject({ status: 'waiting', attempts: 0, workflow_started_at: null });
      expect(await metrics.registry.getSingleMetricAsString('webhook_foreign_delivery_workflows_total')).toContain('webhook_foreign_delivery_workflows_total 2');
    });

    test("the event's own owner is sent as before", async () => {
      const event = await newEvent();
      const owner = { installation: await readInstallation(db), key: (await eventRow(db, event.id)).uuid };
      expect((await eventRow(db, event.id)).workflow_started_at).toBeNull();
      expect(await run(activities.attemptDelivery, { ...firstAttempt(event.id), owner })).toMatchObject({ outcome: 'delivered' });
      expect(subscriber.requests).toHaveLength(1);
      // Its first attempt marks its delivery started (the relay leaves that to it).
      expect((await eventRow(db, event.id)).workflow_started_at).toBeInstanceOf(Date);
    });
  });

  test("records the attempt's start before the POST leaves; the statement recording the outcome takes it back", async () => {
    const event = await newEvent();
    const startsAtRequest: unknown[] = [];
    replies = async () => {
      startsAtRequest.push(...(await attemptStartRows(db, event.id)));
      return { status: 200 };
    };
    await run(activities.attemptDelivery, firstAttempt(event.id));

    expect(startsAtRequest).toEqual([{ number: 1, manual: false, started_at: signedAt }]);
    expect(await attemptStartRows(db, event.id)).toEqual([]);
    expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, outcome: 'delivered' }]);
  });

  test('nothing is started for a request that cannot be made: no POST leaves', async () => {
    const event = await newEvent({ active: false });
    await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(await attemptStartRows(db, event.id)).toEqual([]);
    expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, outcome: 'failed' }]);
  });

  test('two executions of one attempt (its workflow task timed out while the first still ran) both keep a row: the first outcome counts, the other start shows interrupted', async () => {
    const event = await newEvent();
    // The request that arrives first is answered only once the other one's outcome (503) is recorded.
    replies = async (request) => {
      if (request.index > 0) return { status: 503 };
      await eventually(async () => (await attemptRows(db, event.id)).length > 0, { what: 'the other execution recorded' });
      return { status: 200 };
    };
    await Promise.all([run(activities.attemptDelivery, firstAttempt(event.id)), run(activities.attemptDelivery, firstAttempt(event.id))]);

    expect(subscriber.requests).toHaveLength(2);
    expect(await eventRow(db, event.id)).toMatchObject({ status: 'failed', attempts: 1 });
    const { attempts } = (await findEventWithAttempts(db, event.id))!;
    expect(attempts).toMatchObject([
      { number: 1, outcome: 'failed', interrupted: false },
      { number: 1, outcome: null, duration_ms: null, interrupted: true },
    ]);
  });

  test('records a delivery itself, in one activity', async () => {
    const event = await newEvent();
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));

    expect(result).toMatchObject({ outcome: 'delivered', responseCode: 200, recorded: { status: 'delivered', nextAttemptAtMs: null, retryInMs: null } });
    expect(await eventRow(db, event.id)).toMatchObject({ status: 'delivered', attempts: 1, last_response_code: 200, next_attempt_at: null });
    expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, manual: false, outcome: 'delivered', response_body: 'ok' }]);
  });

  test('records a failure itself, the next attempt due the schedule’s pause after its outcome', async () => {
    replies = () => ({ status: 503, body: 'busy' });
    const event = await newEvent();
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));

    const nextAttemptAtMs = result.startedAtMs + result.durationMs + FIVE_MINUTES;
    // The clock stands still in this test: the activity ends when the attempt started.
    expect(result.recorded).toEqual({ status: 'failed', nextAttemptAtMs, retryInMs: result.durationMs + FIVE_MINUTES });
    expect(await eventRow(db, event.id)).toMatchObject({ status: 'failed', attempts: 1, last_response_body: 'busy', next_attempt_at: new Date(nextAttemptAtMs) });
    expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, manual: false, outcome: 'failed', response_code: 503, response_body: 'busy' }]);
  });

  test('what goes back into workflow history holds the outcome, never the response body', async () => {
    replies = () => ({ status: 500, body: 'Anna Muster, Bahnhofstrasse 12: stack trace …' });
    const event = await newEvent();
    const result = await run(activities.attemptDelivery, firstAttempt(event.id));
    expect(result).toMatchObject({ outcome: 'failed', responseCode: 500 });
    expect(JSON.stringify(result)).not.toContain('Anna Muster');
    expect(await storedBody(event.id)).toBe('Anna Muster, Bahnhofstrasse 12: stack trace …');
  });

  test('a manual attempt leaves the scheduled time of the next attempt where it was', async () => {
    replies = () => ({ status: 503, body: 'busy' });
    const event = await newEvent();
    const first = await run(activities.attemptDelivery, firstAttempt(event.id));
    const manual = await run(activities.attemptDelivery, { eventId: event.id, attemptNumber: 2, attempt: { kind: 'manual' }, retryDelayMs: null });
    expect(manual.recorded).toEqual(first.recorded);
    expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, manual: false }, { number: 2, manual: true }]);
  });

  test('an unknown event is a non-retryable failure', async () => {
    await expect(run(activities.attemptDelivery, firstAttempt(987654321))).rejects.toMatchObject({
      type: 'WebhookEventNotFound',
      nonRetryable: true,
    });
    await expect(run(activities.attemptDelivery, firstAttempt(987654321))).rejects.toBeInstanceOf(
      ApplicationFailure,
    );
  });
});

describe('recordAttempt (after Postgres failed right after the POST)', () => {
  const record = (eventId: number, overrides: object = {}) => ({
    ...firstAttempt(eventId),
    attempt: { kind: 'scheduled', number: 1, outcome: 'failed' } as const,
    result: failed,
    ...overrides,
  });

  test('writes the attempt and the status transition together, the next attempt due the pause after the outcome', async () => {
    const event = await newEvent();
    const state = await run(activities.recordAttempt, record(event.id));

    const nextAttemptAtMs = signedAt.getTime() + 12 + FIVE_MINUTES;
    expect(state).toEqual({ status: 'failed', nextAttemptAtMs, retryInMs: 12 + FIVE_MINUTES });
    expect(await eventRow(db, event.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_response_code: 503,
      last_response_body: null,
      last_error: null,
      next_attempt_at: new Date(nextAttemptAtMs),
      delivered_at: null,
    });
    expect(await attemptRows(db, event.id)).toMatchObject([
      { number: 1, manual: false, outcome: 'failed', response_code: 503, response_body: null, duration_ms: 12, started_at: signedAt },
    ]);
  });

  test('is idempotent per (event, attempt): a retried write changes nothing', async () => {
    const event = await newEvent();
    const first = await run(activities.recordAttempt, record(event.id));
    expect(await run(activities.recordAttempt, record(event.id))).toEqual(first);
    expect((await eventRow(db, event.id)).attempts).toBe(1);
    expect(await attemptRows(db, event.id)).toHaveLength(1);
  });

  test('a delivery clears the next attempt time and sets delivered_at', async () => {
    const event = await newEvent();
    const state = await run(
      activities.recordAttempt,
      record(event.id, { attempt: { kind: 'manual', outcome: 'delivered' }, result: { ...failed, outcome: 'delivered', responseCode: 204 } }),
    );
    expect(state).toEqual({ status: 'delivered', nextAttemptAtMs: null, retryInMs: null });
    expect(await eventRow(db, event.id)).toMatchObject({
      status: 'delivered',
      next_attempt_at: null,
      delivered_at: new Date(signedAt.getTime() + 12),
      last_response_code: 204,
    });
    expect((await attemptRows(db, event.id))[0].manual).toBe(true);
  });
});

describe('with the database down', () => {
  let downDb: Db;

  beforeAll(async () => {
    downDb = createDb({ connectionString: `postgres://postgres:postgres@127.0.0.1:${await freePort()}/nowhere` });
  });

  afterAll(async () => {
    await downDb.destroy();
  });

  test('both activities throw (Temporal retries them) and nothing is sent', async () => {
    const event = await newEvent();
    const down = createDeliveryActivities({ db: downDb, log, allowPrivateAddresses: true, keyring: TEST_KEYRING });
    await expect(run(down.attemptDelivery, firstAttempt(event.id))).rejects.toThrow(/ECONNREFUSED/);
    await expect(
      run(down.recordAttempt, { ...firstAttempt(event.id), attempt: { kind: 'scheduled', number: 1, outcome: 'failed' }, result: failed }),
    ).rejects.toThrow(/ECONNREFUSED/);
    expect(subscriber.requests).toHaveLength(0);
  });

  test('a delivery that cannot be written after the POST is reported unrecorded, never sent again', async () => {
    const postgres = new URL(dbUrl);
    const proxy = await startTcpProxy({ host: postgres.hostname, port: Number(postgres.port) });
    postgres.port = String(proxy.port);
    const proxiedDb = createDb({ connectionString: postgres.toString() });
    try {
      const event = await newEvent();
      replies = () => {
        void proxy.cut(); // down while the subscriber answers
        return { status: 200, body: 'got it' };
      };
      const proxied = createDeliveryActivities({ db: proxiedDb, log, allowPrivateAddresses: true, keyring: TEST_KEYRING });
      const result = await run(proxied.attemptDelivery, firstAttempt(event.id));

      expect(result).toMatchObject({ outcome: 'delivered', responseCode: 200, recorded: null });
      expect(subscriber.requests).toHaveLength(1);
      expect(await attemptRows(db, event.id)).toHaveLength(0);
      // The workflow records the outcome from history: the start it was sent with goes with that write.
      expect(await attemptStartRows(db, event.id)).toHaveLength(1);
      const { outcome, responseCode, error, startedAtMs, durationMs } = result;
      await run(activities.recordAttempt, {
        ...firstAttempt(event.id),
        attempt: { kind: 'scheduled', number: 1, outcome },
        result: { outcome, responseCode, error, startedAtMs, durationMs },
      });
      expect(await attemptStartRows(db, event.id)).toEqual([]);
      expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, outcome: 'delivered', response_body: null }]);
    } finally {
      await proxiedDb.destroy();
      await proxy.close();
    }
  });
});
