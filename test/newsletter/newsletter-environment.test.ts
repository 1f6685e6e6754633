import { randomUUID } from 'node:crypto';
import { PLATFORM_DONOR } from '../support/platform-donor';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * One environment rule for newsletter sign-ups (signUpEnvironment): the linked contact's, or PRODUCTION without a
 * contact. The read API's environment filter and the envelope of newsletter.subscribed must say the same.
 */

const apps: TestApp[] = [];

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function platform(env: NodeJS.ProcessEnv): Promise<TestApp> {
  const app = await startTestApp(env);
  apps.push(app);
  const endpoint = await app.request('PUT', '/admin/api/webhook-endpoint', {
    url: 'https://crm.example.org/hooks',
    payload_version: 'v2.1',
    events: ['newsletter.subscribed'],
  });
  expect(endpoint.status).toBe(200);
  return app;
}

/** A contact of that environment, made by a donation as the platform makes contacts. */
async function contactIn(app: TestApp, environment: 'TEST' | 'PRODUCTION', email: string): Promise<number> {
  const checkout = await app.request('POST', '/platform/checkouts', {
    environment,
    currency: 'CHF',
    donor: { ...PLATFORM_DONOR, email, newsletter: false },
    positions: [{ amount: 20, campaign_id: null, purpose: null }],
    payment: { transaction_id: `tx-${randomUUID()}`, method: 'TWI', status: 'completed' },
  });
  expect(checkout.status).toBe(201);
  return checkout.body.contact_id;
}

/** Signs up and confirms; the envelope environment of the event it fires. */
async function confirmedSignUp(app: TestApp, body: Record<string, unknown>): Promise<{ id: number; environment: string }> {
  const signUp = await app.request('POST', '/platform/newsletter-subscriptions', { language: 'de', ...body });
  expect(signUp.status).toBe(201);
  const id = signUp.body.subscription_id;
  expect((await app.request('POST', `/platform/newsletter-subscriptions/${id}/confirm`)).status).toBe(201);
  const event = await app.db('webhook_events').where({ source_key: `newsletter.subscribed:newsletter_subscription:${id}` }).first();
  return { id, environment: JSON.parse(event.payload).environment };
}

async function listedIn(app: TestApp, id: number): Promise<string[]> {
  const environments: string[] = [];
  for (const environment of ['TEST', 'PRODUCTION']) {
    for (const version of ['v1', 'v2', 'v2.1']) {
      const page = await app.request('GET', `/api/${version}/crm/newsletter-subscriptions/?environment=${environment}`);
      expect(page.status).toBe(200);
      if (page.body.results.some((entry: { subscription_id: number }) => entry.subscription_id === id)) {
        environments.push(`${version} ${environment}`);
      }
    }
  }
  return environments;
}

test.each([
  ['a live platform', {}, 'prod'],
  ['a staging platform', { PLATFORM_IS_STAGING: 'true' }, 'stage'],
])('on %s: a TEST contact’s sign-up is test in both; a live contact’s and an unlinked one are live in both', async (_name, env, live) => {
  const app = await platform(env);
  const testContact = await contactIn(app, 'TEST', 'tina.test@example.ch');
  const liveContact = await contactIn(app, 'PRODUCTION', 'lea.live@example.ch');

  // Linked by id, as a donation form of a TEST payment links it.
  const ofTestContact = await confirmedSignUp(app, { email: 'tina.test@example.ch', contact_id: testContact });
  expect(ofTestContact.environment).toBe('test');
  expect(await listedIn(app, ofTestContact.id)).toEqual(['v1 TEST', 'v2 TEST', 'v2.1 TEST']);

  // Linked by its address (only live contacts are linked that way).
  const ofLiveContact = await confirmedSignUp(app, { email: 'Lea.Live@example.ch' });
  expect(await app.db('newsletter_subscriptions').where({ id: ofLiveContact.id }).first('contact_id')).toEqual({ contact_id: liveContact });
  expect(ofLiveContact.environment).toBe(live);
  expect(await listedIn(app, ofLiveContact.id)).toEqual(['v1 PRODUCTION', 'v2 PRODUCTION', 'v2.1 PRODUCTION']);

  const unlinked = await confirmedSignUp(app, { email: 'nobody.yet@example.ch' });
  expect(unlinked.environment).toBe(live);
  expect(await listedIn(app, unlinked.id)).toEqual(['v1 PRODUCTION', 'v2 PRODUCTION', 'v2.1 PRODUCTION']);
});
