import { Writable } from 'node:stream';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createDeliveryActivities } from '../../activities/delivery-activities';
import { createKeyring } from '../../src/secrets/keyring';
import { createLogger } from '../../src/logger';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { PLATFORM_DONOR } from '../support/platform-donor';
import { basicAuth, STAFF, startTestApp, type TestApp } from '../support/test-app';

/*
 * No secret ever leaves through a log line, an admin response or an error body: passwords (staff and endpoint),
 * tokens, the basic-auth header we send, the signing secret, the JWT secret. The service is driven through the
 * paths that touch them, successes and failures, with logging at its most verbose, and everything it said is
 * scanned. The only place a token may appear is the token pair answering a login or a refresh.
 */

const JWT_SECRET = 'jwt-secret-ZQ8V2PXK-of-at-least-thirty-two-characters';
const ENDPOINT = { username: 'crm-user', password: 'Endpoint-Password-93KXM' };
const SIGNING_SECRET = 'whsec_c2lnbmluZy1zZWNyZXQtNEc4RjJQLW9mLTMyLWJ5dGU=';

const logLines: string[] = [];
const captured = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logLines.push(chunk.toString('utf8'));
    done();
  },
});
const log = createLogger('trace', 'secret-scan', captured);

/** Everything the service answered, except the token pairs that are the point of a login or refresh. */
const answers: Array<{ what: string; text: string }> = [];
/** Tokens the service issued: secrets too, once issued. */
const issuedTokens: string[] = [];

let app: TestApp;
let subscriber: Subscriber;

beforeAll(async () => {
  app = await startTestApp({ JWT_SECRET, LOG_LEVEL: 'trace' }, { log });
  // A subscriber that echoes every request back, headers and all: the worst case for the stored answers.
  subscriber = await startSubscriber({
    reply: (request) => ({ status: 500, body: `echo: ${JSON.stringify(request.headers)} ${request.body.toString('utf8')}` }),
  });
});
afterAll(async () => {
  await subscriber?.close();
  await app?.close();
});

async function call(method: string, path: string, { body, headers = {} }: { body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await app.anonymous.send(method, path, body, headers);
  const text = await response.text();
  const headerText = JSON.stringify(Object.fromEntries(response.headers));
  const tokenPair = response.status === 200 && /^\/authentication\/(create|refresh)$/.test(path);
  if (tokenPair) {
    const pair = JSON.parse(text) as { access: string; refresh: string };
    issuedTokens.push(pair.access, pair.refresh);
    answers.push({ what: `${method} ${path} (headers)`, text: headerText });
  } else {
    answers.push({ what: `${method} ${path} → ${response.status}`, text: `${headerText} ${text}` });
  }
  return { status: response.status, text };
}

test('secrets never appear in logs, admin responses or error bodies', async () => {
  // Logins: right, wrong, malformed, with the password in a body that does not parse.
  const login = JSON.parse((await call('POST', '/authentication/create', { body: STAFF })).text) as { access: string; refresh: string };
  await call('POST', '/authentication/create', { body: { username: STAFF.username, password: `${STAFF.password}-wrong` } });
  await call('POST', '/authentication/create', { body: `{"username":"${STAFF.username}","password":"${STAFF.password}"` });
  await call('POST', '/authentication/create', { body: { username: STAFF.password, password: STAFF.password } });
  await call('POST', '/authentication/create', { body: { username: STAFF.username, password: STAFF.password.repeat(2000) } });
  const staff = { Authorization: `Bearer ${login.access}` };

  // Token life cycle, with reuse and misuse.
  const rotated = JSON.parse((await call('POST', '/authentication/refresh', { body: { refresh: login.refresh } })).text) as { refresh: string };
  await call('POST', '/authentication/refresh', { body: { refresh: login.refresh } });
  await call('POST', '/authentication/verify', { body: { token: login.access } });
  await call('POST', '/authentication/verify', { body: { token: `${login.access}x` } });
  await call('POST', '/authentication/logout', { body: { refresh: rotated.refresh } });
  await call('POST', '/authentication/logout', { body: { refresh: rotated.refresh } });
  await call('GET', '/api/v2.1/crm/contacts/', { headers: { Authorization: `Bearer ${login.refresh}` } });

  // HTTP Basic, right and wrong.
  await call('GET', '/api/v2.1/crm/contacts/', { headers: { Authorization: basicAuth(STAFF.username, STAFF.password) } });
  await call('GET', '/api/v2.1/crm/contacts/', { headers: { Authorization: basicAuth(STAFF.username, `${STAFF.password}x`) } });
  await call('GET', '/api/v2.1/crm/contacts/', { headers: { Authorization: `Basic ${STAFF.password}` } });

  // The endpoint's credentials and signing secret: saved, shown, refused when invalid.
  await call('PUT', '/admin/api/webhook-endpoint', {
    headers: staff,
    body: { url: `${subscriber.url}`, basic_auth_username: ENDPOINT.username, basic_auth_password: ENDPOINT.password, signing_secret: SIGNING_SECRET },
  });
  await call('GET', '/admin/api/webhook-endpoint', { headers: staff });
  await call('PUT', '/admin/api/webhook-endpoint', { headers: staff, body: { signing_secret: `${SIGNING_SECRET} with spaces` } });
  await call('PUT', '/admin/api/webhook-endpoint', { headers: staff, body: { basic_auth_username: `${ENDPOINT.password}:x` } });
  await call('PUT', '/admin/api/webhook-endpoint', { headers: staff, body: { basic_auth_password: ENDPOINT.password.repeat(20) } });
  await call('PUT', '/admin/api/webhook-endpoint', { headers: staff, body: `{"basic_auth_password":"${ENDPOINT.password}"` });

  // A platform call creates an event; its delivery sends basic auth and a signature to the echoing subscriber.
  await call('POST', '/platform/checkouts', {
    headers: staff,
    body: {
      environment: 'TEST',
      currency: 'CHF',
      donor: { ...PLATFORM_DONOR, newsletter: false },
      positions: [{ amount: 10 }],
      payment: { transaction_id: 'scan-1', method: 'VIS' },
    },
  });
  const [{ id: eventId }] = await app.db('webhook_events').select('id');
  const activities = createDeliveryActivities({ db: app.db, log, allowPrivateAddresses: true, keyring: createKeyring(app.config.secrets.keys) });
  const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A) =>
    new MockActivityEnvironment({ workflowExecution: { workflowId: `webhook-event-${eventId}`, runId: 'run' } }, { logger: new DefaultLogger('ERROR') }).run(
      fn,
      ...args,
    ) as Promise<R>;
  await run(activities.attemptDelivery, { eventId, attemptNumber: 1, attempt: { kind: 'scheduled', number: 1 }, retryDelayMs: null });
  expect(subscriber.requests[0].headers.authorization).toBe(basicAuth(ENDPOINT.username, ENDPOINT.password));
  expect(subscriber.requests[0].headers['webhook-signature']).toMatch(/^v1,/);

  // What the admin sees of it.
  await call('GET', '/admin/api/webhook-events', { headers: staff });
  await call('GET', `/admin/api/webhook-events/${eventId}`, { headers: staff });

  const secrets = {
    'staff password': STAFF.password,
    'staff basic header': basicAuth(STAFF.username, STAFF.password).slice('Basic '.length),
    'endpoint password': ENDPOINT.password,
    'endpoint basic header': basicAuth(ENDPOINT.username, ENDPOINT.password).slice('Basic '.length),
    'signing secret': SIGNING_SECRET,
    'signing key': Buffer.from(SIGNING_SECRET.slice('whsec_'.length), 'base64').toString('utf8'),
    'JWT secret': JWT_SECRET,
    ...Object.fromEntries(issuedTokens.map((token, i) => [`token ${i}`, token])),
  };
  // The service logs little at this level of traffic; the delivery attempt is the line that touches credentials.
  expect(logLines.some((line) => line.includes('webhook delivery attempt'))).toBe(true);
  expect(answers.length).toBeGreaterThan(20);
  const leaks: string[] = [];
  for (const [name, secret] of Object.entries(secrets)) {
    for (const [i, line] of logLines.entries()) if (line.includes(secret)) leaks.push(`${name} in log line ${i}: ${line.slice(0, 200)}`);
    for (const { what, text } of answers) if (text.includes(secret)) leaks.push(`${name} in the answer to ${what}`);
  }
  expect(leaks).toEqual([]);
});
