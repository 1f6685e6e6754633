import { PLATFORM_DONOR as donor } from '../support/platform-donor';
import { checkoutBody, type EventRow, eventsCreatedBy, useEndpoint } from '../support/platform-calls';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * Consent belongs to the address that confirmed (docs/platform-api.md): a double opt-in never sets the newsletter
 * consent of a contact with another e-mail address, nor sends newsletter.subscribed with that contact's address.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  await useEndpoint(app, { payload_version: 'v2.1' });
});

afterAll(async () => {
  await app?.close();
});

/** A live contact (a donation) with the address; its id. */
async function contactWith(email: string): Promise<number> {
  const response = await app.request('POST', '/platform/checkouts', checkoutBody({ donor: { ...donor, email, newsletter: false } }));
  expect(response.status).toBe(201);
  return response.body.contact_id;
}

const signUp = (body: Record<string, unknown>) => app.request('POST', '/platform/newsletter-subscriptions', { language: 'de', ...body });
const confirm = (id: number) => app.request('POST', `/platform/newsletter-subscriptions/${id}/confirm`);
const consentOf = async (contactId: number) => (await app.db('contacts').where({ id: contactId }).first()).newsletter as boolean;
const subscribed = (event: EventRow) => JSON.parse(event.payload).data.newsletter_subscription;

describe('a sign-up naming a contact', () => {
  test('with another e-mail address is a 409, also for an address already signed up; nothing is written', async () => {
    const victim = await contactWith('victim@example.ch');
    const already = await signUp({ email: 'attacker@example.org' });
    const before = await app.db('newsletter_subscriptions').count('* as n');
    for (const email of ['attacker@example.org', 'other-attacker@example.org', 'victim@example.ch.evil.org', 'victim+x@example.ch']) {
      const response = await signUp({ email, contact_id: victim });
      expect([email, response.status, response.body.code]).toEqual([email, 409, 'contact_email_mismatch']);
    }
    expect(await app.db('newsletter_subscriptions').count('* as n')).toEqual(before);
    expect((await app.db('newsletter_subscriptions').where({ id: already.body.subscription_id }).first()).contact_id).toBeNull();
    expect(await consentOf(victim)).toBe(false);
  });

  test('look-alike spellings of the address are no address at all; another case is the same address', async () => {
    const contact = await contactWith('lookalike@example.ch');
    // Cyrillic і, fullwidth letters, the Kelvin sign, blanks inside: refused before any contact is looked at.
    for (const email of ['lookalіke@example.ch', 'ｌookalike@example.ch', 'loo\u212Alike@example.ch', 'look alike@example.ch', 'lookalike@example.ch\n.ch']) {
      const response = await signUp({ email, contact_id: contact });
      expect([email, response.status, response.body.code]).toEqual([email, 400, 'invalid_body']);
    }
    const sameAddress = await signUp({ email: 'LookAlike@EXAMPLE.ch', contact_id: contact });
    expect([sameAddress.status, sameAddress.body.contact_id]).toEqual([201, contact]);
    // Surrounding blanks are trimmed, as from every text field: the address itself, stored without them.
    const trimmed = await contactWith('trimmed@example.ch');
    const padded = await signUp({ email: ' trimmed@example.ch\n', contact_id: trimmed });
    expect([padded.status, padded.body.contact_id, padded.body.email]).toEqual([201, trimmed, 'trimmed@example.ch']);
  });
});

describe('the confirmation', () => {
  test('of a sign-up made before its contact existed links the contact with the address and records its consent', async () => {
    const email = 'early-bird@example.ch';
    const made = await signUp({ email });
    expect(made.body.contact_id).toBeNull();
    const contact = await contactWith(email);
    const [event] = await eventsCreatedBy(app, async () => expect((await confirm(made.body.subscription_id)).body.contact_id).toBe(contact));
    expect(subscribed(event)).toMatchObject({ contact_id: contact, email });
    expect(await consentOf(contact)).toBe(true);
  });

  test('after the contact’s address changed: no consent for the contact, the event shows the confirmed address only', async () => {
    const contact = await contactWith('moving-reader@example.ch');
    const made = await signUp({ email: 'moving-reader@example.ch', first_name: 'Mia', contact_id: contact });
    expect(made.body.contact_id).toBe(contact);
    await app.db('contacts').where({ id: contact }).update({ email: 'new-owner@example.org', first_name: 'Nora' });

    let answer!: { status: number; body: any };
    const events = await eventsCreatedBy(app, async () => {
      answer = await confirm(made.body.subscription_id);
    });
    expect([answer.status, answer.body.contact_id]).toEqual([201, null]);
    expect(events).toHaveLength(1);
    expect(subscribed(events[0])).toMatchObject({ contact_id: null, email: 'moving-reader@example.ch', first_name: 'Mia' });
    expect(await consentOf(contact)).toBe(false);
    // The read API lists the sign-up with its own address, in the live environment.
    const listed = await app.request('GET', '/api/v2.1/crm/newsletter-subscriptions/?environment=PRODUCTION&page_size=1000');
    expect(listed.body.results.find((row: { subscription_id: number }) => row.subscription_id === made.body.subscription_id)).toMatchObject({
      contact_id: null,
      email: 'moving-reader@example.ch',
    });
  });

  test('after the confirmation the consent stays with the contact whatever its address becomes', async () => {
    const contact = await contactWith('settled-reader@example.ch');
    const made = await signUp({ email: 'settled-reader@example.ch', contact_id: contact });
    await confirm(made.body.subscription_id);
    await app.db('contacts').where({ id: contact }).update({ email: 'settled-reader@example.org' });
    expect(await consentOf(contact)).toBe(true);
    expect((await confirm(made.body.subscription_id)).status).toBe(200);
  });

  test('a sign-up linked to a contact of another address before this rule confirms without touching that contact', async () => {
    const victim = await contactWith('old-victim@example.ch');
    const made = await signUp({ email: 'old-attacker@example.org' });
    // As the sign-up call allowed before: the attacker's address, the victim's contact.
    await app.db('newsletter_subscriptions').where({ id: made.body.subscription_id }).update({ contact_id: victim });
    const [event] = await eventsCreatedBy(app, () => confirm(made.body.subscription_id));
    expect(subscribed(event)).toMatchObject({ contact_id: null, email: 'old-attacker@example.org' });
    expect(await consentOf(victim)).toBe(false);
    expect(JSON.parse(event.payload).environment).toBe('prod');
  });

  test('a change of case by a later donation is the same address: the contact consents', async () => {
    const contact = await contactWith('case-reader@example.ch');
    const made = await signUp({ email: 'case-reader@example.ch', contact_id: contact });
    expect((await app.request('POST', '/platform/checkouts', checkoutBody({ donor: { ...donor, email: 'Case-Reader@Example.CH' } }))).body.contact_id).toBe(
      contact,
    );
    const [event] = await eventsCreatedBy(app, () => confirm(made.body.subscription_id));
    expect(subscribed(event)).toMatchObject({ contact_id: contact, email: 'Case-Reader@Example.CH' });
    expect(await consentOf(contact)).toBe(true);
  });
});

describe('at the same moment', () => {
  test('30 confirmations of one sign-up: one 201, 29 times 200, one event with the sign-up’s address', async () => {
    const contact = await contactWith('thirty-clicks@example.ch');
    const made = await signUp({ email: 'thirty-clicks@example.ch', contact_id: contact });
    let statuses: number[] = [];
    const events = await eventsCreatedBy(app, async () => {
      statuses = (await Promise.all(Array.from({ length: 30 }, () => confirm(made.body.subscription_id)))).map((answer) => answer.status);
    });
    expect(statuses.sort((a, b) => a - b)).toEqual([...Array(29).fill(200), 201]);
    expect(events.map((event) => subscribed(event).email)).toEqual(['thirty-clicks@example.ch']);
  });

  test('a confirmation racing a change of the contact’s address: one event, never the other address', async () => {
    for (let round = 0; round < 10; round += 1) {
      const email = `racing-reader-${round}@example.ch`;
      const contact = await contactWith(email);
      const made = await signUp({ email, contact_id: contact });
      const events = await eventsCreatedBy(app, () =>
        Promise.all([
          ...Array.from({ length: 5 }, () => confirm(made.body.subscription_id)),
          app.db('contacts').where({ id: contact }).update({ email: `someone-else-${round}@example.org` }),
        ]),
      );
      expect(events).toHaveLength(1);
      const event = subscribed(events[0]);
      expect(event.email).toBe(email);
      // Either the confirmation came first (the contact consented while it had the address) or the change did.
      expect([round, event.contact_id === contact]).toEqual([round, await consentOf(contact)]);
    }
  });

  test('a confirmation racing donations that update the contact: one event, the contact consents', async () => {
    const email = 'busy-reader@example.ch';
    const contact = await contactWith(email);
    const made = await signUp({ email, contact_id: contact });
    const events = await eventsCreatedBy(app, () =>
      Promise.all([
        confirm(made.body.subscription_id),
        ...Array.from({ length: 10 }, (_, index) =>
          app.request('POST', '/platform/checkouts', checkoutBody({ donor: { ...donor, email: index % 2 ? email.toUpperCase() : email, city: `Ort ${index}` } })),
        ),
      ]),
    );
    const subscribedEvents = events.filter((event) => event.event_type === 'newsletter.subscribed').map(subscribed);
    expect(subscribedEvents).toHaveLength(1);
    expect([subscribedEvents[0].contact_id, subscribedEvents[0].email.toLowerCase()]).toEqual([contact, email]);
    expect(await consentOf(contact)).toBe(true);
  });
});
