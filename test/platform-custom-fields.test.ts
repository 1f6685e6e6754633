import { PLATFORM_DONOR as donor } from './support/platform-donor';
import { checkoutBody, eventsCreatedBy, useEndpoint } from './support/platform-calls';
import { startTestApp, type TestApp } from './support/test-app';

/*
 * A contact's merged custom field answers are capped (docs/platform-api.md): the latest answer to each of its most
 * recently answered field names, at most as many as one form may ask; each checkout keeps all its own.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

const names = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}-${String(index + 1).padStart(2, '0')}`);

/** One checkout of the donor at the app clock's time plus `minutes`, answering the fields. */
async function donate(email: string, minutes: number, customFields: Record<string, string | boolean>) {
  app.clock.now = Date.parse('2025-07-15T10:30:00Z') / 1000 + minutes * 60;
  const response = await app.request('POST', '/platform/checkouts', checkoutBody({ donor: { ...donor, email, custom_fields: customFields } }));
  expect(response.status).toBe(201);
  return response.body;
}

const contactOf = (email: string) => app.db('contacts').whereRaw('lower(email) = lower(?)', [email]).first();

/** The contact as the read API's v2 contact list shows it, and the size of that page's body. */
async function listedContact(id: number) {
  const response = await app.get(`/api/v2/crm/contacts/?environment=PRODUCTION&page_size=1000`);
  const text = await response.text();
  const contact = (JSON.parse(text) as { results: Array<{ id: number; custom_fields: Record<string, unknown> }> }).results.find((c) => c.id === id)!;
  return { contact, bytes: Buffer.byteLength(text) };
}

test('60 checkouts with 50 new field names each: the contact keeps the latest checkout’s 50, not 3,000', async () => {
  const email = 'many-forms@example.ch';
  const value = 'x'.repeat(200);
  for (let checkout = 1; checkout <= 60; checkout += 1) {
    await donate(email, checkout, Object.fromEntries(names(`c${checkout}`, 50).map((name) => [name, value])));
  }
  const contact = await contactOf(email);
  expect(Object.keys(contact.custom_fields).sort()).toEqual(names('c60', 50));
  const { contact: listed, bytes } = await listedContact(contact.id);
  expect(Object.keys(listed.custom_fields)).toHaveLength(50);
  // 50 answers of 200 characters, not 3,000 (0.7 MB).
  expect(bytes).toBeLessThan(15_000);
  // Each checkout keeps its own answers.
  expect(await app.db('checkouts').where({ contact_id: contact.id }).orderBy('id').first()).toMatchObject({
    custom_fields: Object.fromEntries(names('c1', 50).map((name) => [name, value])),
  });
});

test('one new name per checkout: the 50 most recently answered names stay, each with its latest answer', async () => {
  const email = 'one-at-a-time@example.ch';
  for (let checkout = 1; checkout <= 60; checkout += 1) await donate(email, checkout, { [`F-${String(checkout).padStart(2, '0')}`]: `answer ${checkout}` });
  expect(Object.keys((await contactOf(email)).custom_fields).sort()).toEqual(names('F', 60).slice(10));

  // Answering an old name again makes it recent: it comes back with its new answer, the oldest kept name goes.
  await donate(email, 61, { 'F-05': 'answered again', 'F-60': true });
  const fields = (await contactOf(email)).custom_fields;
  expect(Object.keys(fields).sort()).toEqual(['F-05', ...names('F', 60).slice(11)]);
  expect([fields['F-05'], fields['F-60'], fields['F-59']]).toEqual(['answered again', true, 'answer 59']);
});

test('under the cap nothing is dropped: answers merge, the latest answer of each name wins', async () => {
  const email = 'few-fields@example.ch';
  await donate(email, 1, { Anlass: 'Geburtstag', Spendenquittung: true });
  await donate(email, 2, { Anlass: 'Hochzeit' });
  expect((await contactOf(email)).custom_fields).toEqual({ Anlass: 'Hochzeit', Spendenquittung: true });
});

test('the webhook shows each checkout’s own answers, at most 50; a 51st field is refused', async () => {
  await useEndpoint(app, { payload_version: 'v2' });
  const email = 'webhook-fields@example.ch';
  await donate(email, 1, Object.fromEntries(names('old', 50).map((name) => [name, 'old'])));
  const [event] = await eventsCreatedBy(app, () => donate(email, 2, { Anlass: 'Weihnachten' }));
  expect(JSON.parse(event.payload).data.donation.donor.custom_fields).toEqual({ Anlass: 'Weihnachten' });
  const refused = await app.request(
    'POST',
    '/platform/checkouts',
    checkoutBody({ donor: { ...donor, email, custom_fields: Object.fromEntries(names('new', 51).map((name) => [name, true])) } }),
  );
  expect([refused.status, refused.body.problems]).toEqual([400, [{ in: 'body', name: 'donor.custom_fields', message: 'at most 50 custom fields' }]]);
  // Field names longer than 100 characters and answers longer than 1,000 are refused as well.
  for (const fields of [{ ['n'.repeat(101)]: true }, { Anlass: 'v'.repeat(1001) }]) {
    expect((await app.request('POST', '/platform/checkouts', checkoutBody({ donor: { ...donor, email, custom_fields: fields } }))).status).toBe(400);
  }
});

test('checkouts of one contact at once: the contact ends with the cap, as the rule computes it', async () => {
  const email = 'parallel-fields@example.ch';
  app.clock.now = Date.parse('2025-09-01T10:00:00Z') / 1000;
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, checkout) => {
      const customFields = Object.fromEntries(names(`p${checkout}`, 20).map((name) => [name, `answer ${checkout}`]));
      return app.request('POST', '/platform/checkouts', checkoutBody({ donor: { ...donor, email, custom_fields: customFields } }));
    }),
  );
  expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201));
  const contact = await contactOf(email);
  const checkouts: Array<{ custom_fields: Record<string, unknown> }> = await app.db('checkouts').where({ contact_id: contact.id }).orderBy('id', 'desc');
  expect(checkouts).toHaveLength(10);
  // Same time for all: the most recent are the last written (highest id), their names in order, 50 in all.
  const expected = checkouts.flatMap((checkout) => Object.keys(checkout.custom_fields).sort()).slice(0, 50);
  expect(Object.keys(contact.custom_fields).sort()).toEqual(expected.sort());
  expect(expected).toHaveLength(50);
});

test('a field name or answer that is no valid Unicode is a 400, not an error of Postgres’ jsonb', async () => {
  // JSON allows an unpaired surrogate escape (`"\ud800"`); jsonb refuses it, and the insert failed as a 500.
  for (const customFields of [{ 'Frage\ud800': 'ja' }, { Frage: 'ja\udc00' }]) {
    const response = await app.request('POST', '/platform/checkouts', checkoutBody({ donor: { ...donor, email: 'surrogate@example.ch', custom_fields: customFields } }));
    expect([response.status, response.body.code]).toEqual([400, 'invalid_body']);
  }
  expect(await contactOf('surrogate@example.ch')).toBeUndefined();
});
