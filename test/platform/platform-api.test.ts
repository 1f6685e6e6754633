import { isValidQrReference } from '../../src/platform/invoice-reference';
import type { EndpointSettings } from '../../src/webhook-endpoint/endpoint-store';
import { insertCampaignLinks } from '../support/api-fixtures';
import { PLATFORM_DONOR as donor, presentedDonor } from '../support/platform-donor';
import {
  checkoutBody as baseCheckoutBody,
  eventsCreatedBy as eventsOf,
  nextTransactionId,
  SHOP_CUSTOMER as customer,
  shopOrderBody,
  useEndpoint as useAnyEndpoint,
} from '../support/platform-calls';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let water: number;
let school: number;

beforeAll(async () => {
  app = await startTestApp();
  [{ id: water }, { id: school }] = await app.db('campaigns').insert([{ title: 'Wasser für alle' }, { title: 'Schulbildung' }]).returning('id');
});

afterAll(async () => {
  await app?.close();
});

const useEndpoint = (settings: Partial<EndpointSettings> = {}) => useAnyEndpoint(app, settings);
const eventsCreatedBy = (action: () => Promise<unknown>) => eventsOf(app, action);
const checkoutBody = (overrides: Record<string, unknown> = {}) =>
  baseCheckoutBody({ positions: [{ amount: 50, campaign_id: water, purpose: 'Brunnenbau' }], ...overrides });

const postCheckout = (body: unknown) => app.request('POST', '/platform/checkouts', body);

describe('checkouts', () => {
  test('a single TWINT donation writes contact, checkout and donation, and one exact donation.completed event', async () => {
    await useEndpoint({ payload_version: 'v1' });
    app.clock.now = Date.parse('2025-07-15T10:30:00Z') / 1000;
    const body = checkoutBody({
      donor: { ...donor, custom_fields: { Anlass: 'Geburtstag' } },
      payment: { transaction_id: 'twint-single-1', method: 'TWI', status: 'completed' },
    });
    let response!: Awaited<ReturnType<TestApp['request']>>;
    const events = await eventsCreatedBy(async () => {
      response = await postCheckout(body);
    });

    expect(response.status).toBe(201);
    const number: string = response.body.number;
    expect(response.body).toEqual({
      number,
      transaction_id: 'twint-single-1',
      environment: 'PRODUCTION',
      contact_id: expect.any(Number),
      currency: 'CHF',
      total_amount: 50,
      payment: { transaction_id: 'twint-single-1', method: 'TWI', status: 'completed' },
      invoice: null,
      recurring_id: null,
      created_at: '2025-07-15T10:30:00Z',
      donations: [
        { number, position: 1, amount: 50, campaign_id: water, purpose: 'Brunnenbau', payment_type: 'single', recurring_id: null },
      ],
    });

    const contact = await app.db('contacts').where({ id: response.body.contact_id }).first();
    expect(contact).toMatchObject({ environment: 'PRODUCTION', email: 'anna.muster@example.ch', custom_fields: { Anlass: 'Geburtstag' } });
    const checkout = await app.db('checkouts').where({ number }).first();
    expect(checkout).toMatchObject({ total_amount_minor: 5000, payment_method: 'TWI', custom_fields: { Anlass: 'Geburtstag' } });

    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({
      event_type: 'donation.completed',
      payload_version: 'v1',
      source_key: `donation.completed:donation:${number}`,
      status: 'waiting',
    });
    expect(event.payload).toBe(
      JSON.stringify({
        id: event.id,
        event: 'donation.completed',
        created_at: '2025-07-15T10:30:00Z',
        environment: 'prod',
        data: {
          donation: {
            id: number,
            created_at: '2025-07-15T12:30:00+02:00',
            amount: 50,
            currency: 'CHF',
            campaign: { id: water, title: 'Wasser für alle' },
            purpose: 'Brunnenbau',
            donor: presentedDonor(),
            payment: { transaction_id: 'twint-single-1', method: 'TWI', status: 'completed' },
            invoice: null,
          },
        },
      }),
    );
  });

  test('repeating a checkout returns the existing record with 200 and creates nothing', async () => {
    await useEndpoint();
    const body = checkoutBody();
    const first = await postCheckout(body);
    const counts = async () =>
      Promise.all(['contacts', 'checkouts', 'donations', 'webhook_events'].map(async (table) => (await app.db(table).count('* as n'))[0].n));
    const before = await counts();
    const events = await eventsCreatedBy(async () => {
      const again = await postCheckout(body);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
    });
    expect(events).toEqual([]);
    expect(await counts()).toEqual(before);
  });

  test('two identical calls racing each other create one checkout and one event', async () => {
    await useEndpoint({ payload_version: 'v2' });
    const body = checkoutBody({ donor: { ...donor, email: 'race@example.ch' } });
    let responses: { status: number }[] = [];
    const events = await eventsCreatedBy(async () => {
      responses = await Promise.all([postCheckout(body), postCheckout(body), postCheckout(body)]);
    });
    expect(responses.map((r) => r.status).sort((a, b) => a - b)).toEqual([200, 200, 201]);
    expect(events).toHaveLength(1);
    expect(await app.db('contacts').whereRaw('lower(email) = ?', ['race@example.ch'])).toHaveLength(1);
  });

  test('a multi-checkout paid by QR invoice: one event on v2.1, one event per position on v1 and v2', async () => {
    const positions = [
      { amount: 50, campaign_id: water, purpose: 'Brunnenbau' },
      { amount: 25.5, campaign_id: school },
    ];
    const payment = () => ({ transaction_id: nextTransactionId(), method: 'INV', status: 'pending' });

    await useEndpoint({ payload_version: 'v2.1' });
    let response!: Awaited<ReturnType<TestApp['request']>>;
    const onV21 = await eventsCreatedBy(async () => {
      response = await postCheckout(checkoutBody({ positions, payment: payment() }));
    });
    expect(response.status).toBe(201);
    expect(response.body.total_amount).toBe(75.5);
    expect(response.body.donations.map((d: { position: number }) => d.position)).toEqual([1, 2]);
    expect(isValidQrReference(response.body.invoice)).toBe(true);
    expect(onV21).toHaveLength(1);
    const donation = JSON.parse(onV21[0].payload).data.donation;
    expect(donation).toMatchObject({
      id: response.body.number,
      amount: 75.5,
      campaign: null,
      purpose: null,
      payment: { method: 'INV', status: 'pending' },
      invoice: response.body.invoice,
      positions: [
        { id: response.body.donations[0].number, amount: 50, campaign: { id: water, title: 'Wasser für alle' }, purpose: 'Brunnenbau' },
        { id: response.body.donations[1].number, amount: 25.5, campaign: { id: school, title: 'Schulbildung' }, purpose: null },
      ],
    });

    for (const version of ['v1', 'v2'] as const) {
      await useEndpoint({ payload_version: version });
      const events = await eventsCreatedBy(() => postCheckout(checkoutBody({ positions, payment: payment() })));
      expect(events.map((e) => JSON.parse(e.payload).data.donation.amount)).toEqual([50, 25.5]);
      expect(events.every((e) => !('positions' in JSON.parse(e.payload).data.donation))).toBe(true);
    }
  });

  test('invoice reference: a QR reference by default, a text or the purpose when the product says so', async () => {
    const inv = (extra: Record<string, unknown>) =>
      postCheckout(checkoutBody({ payment: { transaction_id: nextTransactionId(), method: 'INV', status: 'pending' }, ...extra }));
    expect(isValidQrReference((await inv({})).body.invoice)).toBe(true);
    expect((await inv({ invoice_reference_mode: 'text', invoice_reference_text: 'Spende Herbst' })).body.invoice).toBe('Spende Herbst');
    expect((await inv({ invoice_reference_mode: 'purpose' })).body.invoice).toBe('Brunnenbau');
    const noText = await inv({ invoice_reference_mode: 'text' });
    expect(noText.status).toBe(400);
    expect(noText.body.error).toMatch(/invoice_reference_text/);
  });

  test('a card payment of a product in text mode needs no reference text: it has no invoice', async () => {
    const card = await postCheckout(checkoutBody({ invoice_reference_mode: 'text' }));
    expect(card.status).toBe(201);
    expect(card.body.invoice).toBeNull();
  });

  test('the envelope says test for TEST payments, and contacts are separate per environment', async () => {
    await useEndpoint();
    const email = 'envs@example.ch';
    const [live] = await eventsCreatedBy(() => postCheckout(checkoutBody({ donor: { ...donor, email } })));
    const [test] = await eventsCreatedBy(() => postCheckout(checkoutBody({ environment: 'TEST', donor: { ...donor, email } })));
    expect(JSON.parse(live.payload).environment).toBe('prod');
    expect(JSON.parse(test.payload).environment).toBe('test');
    expect(await app.db('contacts').where({ email }).pluck('environment')).toEqual(expect.arrayContaining(['PRODUCTION', 'TEST']));
  });

  test('a returning donor keeps one contact: address and answers follow the latest donation, consent stays', async () => {
    const email = 'returning@example.ch';
    const first = await postCheckout(checkoutBody({ donor: { ...donor, email, custom_fields: { Anlass: 'Hochzeit', Quittung: true } } }));
    const second = await postCheckout(
      checkoutBody({
        donor: { ...donor, email: 'Returning@Example.ch', city: 'Bern', postal_code: '3011', newsletter: false, custom_fields: { Anlass: 'Taufe' } },
      }),
    );
    expect(second.body.contact_id).toBe(first.body.contact_id);
    const contact = await app.db('contacts').where({ id: first.body.contact_id }).first();
    // An unticked newsletter box does not withdraw the consent given with the first donation.
    expect(contact).toMatchObject({ city: 'Bern', postal_code: '3011', newsletter: true, custom_fields: { Anlass: 'Taufe', Quittung: true } });
    // Each checkout keeps the answers given with it.
    expect((await app.db('checkouts').where({ number: first.body.number }).first()).custom_fields).toEqual({ Anlass: 'Hochzeit', Quittung: true });
  });
});

describe('which events are created', () => {
  test('none while the endpoint is inactive, none for an event type not selected, none without an endpoint', async () => {
    await useEndpoint({ active: false });
    expect(await eventsCreatedBy(() => postCheckout(checkoutBody()))).toEqual([]);
    await useEndpoint({ events: ['shop_order.completed'] });
    expect(await eventsCreatedBy(() => postCheckout(checkoutBody()))).toEqual([]);
    await app.db('webhook_events').delete();
    await app.db('webhook_endpoints').delete();
    const created = await postCheckout(checkoutBody());
    expect(created.status).toBe(201);
    expect(await app.db('webhook_events').count('* as n')).toEqual([{ n: 0 }]);
  });
});

describe('recurring donations', () => {
  async function startRecurring(method: string, email: string) {
    const response = await postCheckout(
      checkoutBody({
        donor: { ...donor, email, custom_fields: { Anlass: 'Dauerauftrag' } },
        positions: [{ amount: 20, campaign_id: water, purpose: 'Patenschaft', payment_type: 'recurring_init', recurring: { interval: 'monthly' } }],
        payment: { transaction_id: nextTransactionId(), method, status: method === 'INV' ? 'pending' : 'completed' },
      }),
    );
    expect(response.status).toBe(201);
    return response.body.donations[0].recurring_id as number;
  }

  test('the first payment creates the recurring donation', async () => {
    const recurringId = await startRecurring('VIS', 'recurring-start@example.ch');
    expect(await app.db('recurring_donations').where({ id: recurringId }).first()).toMatchObject({
      interval: 'monthly',
      amount_minor: 2000,
      payment_method: 'VIS',
      campaign_id: water,
      purpose: 'Patenschaft',
      active: true,
    });
  });

  test('an online follow-up: method of the first donation, completed, no invoice, never positions', async () => {
    await useEndpoint({ payload_version: 'v2.1' });
    const recurringId = await startRecurring('VIS', 'recurring-card@example.ch');
    app.clock.now = Date.parse('2025-08-15T06:00:00Z') / 1000;
    const body = { recurring_id: recurringId, payment: { transaction_id: nextTransactionId() } };
    let response!: Awaited<ReturnType<TestApp['request']>>;
    const events = await eventsCreatedBy(async () => {
      response = await app.request('POST', '/platform/recurring-payments', body);
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      recurring_id: recurringId,
      total_amount: 20,
      payment: { method: 'VIS', status: 'completed' },
      invoice: null,
      donations: [{ payment_type: 'recurring_interval', recurring_id: recurringId, amount: 20 }],
    });
    expect(events).toHaveLength(1);
    expect(events[0].event_type).toBe('donation.recurring_completed');
    const envelope = JSON.parse(events[0].payload);
    expect(envelope.data.donation).toEqual({
      id: response.body.number,
      created_at: '2025-08-15T06:00:00Z',
      amount: 20,
      currency: 'CHF',
      campaign: { id: water, title: 'Wasser für alle' },
      purpose: 'Patenschaft',
      donor: expect.objectContaining({ email: 'recurring-card@example.ch', custom_fields: { Anlass: 'Dauerauftrag' } }),
      payment: { transaction_id: body.payment.transaction_id, method: 'VIS', status: 'completed' },
      invoice: null,
    });

    const again = await eventsCreatedBy(async () => {
      const repeat = await app.request('POST', '/platform/recurring-payments', body);
      expect(repeat.status).toBe(200);
      expect(repeat.body).toEqual(response.body);
    });
    expect(again).toEqual([]);
  });

  test('a QR-invoice follow-up is INV, pending, with a reference; the amount may differ', async () => {
    await useEndpoint({ payload_version: 'v1' });
    const recurringId = await startRecurring('INV', 'recurring-invoice@example.ch');
    const [event] = await eventsCreatedBy(async () => {
      const response = await app.request('POST', '/platform/recurring-payments', {
        recurring_id: recurringId,
        payment: { transaction_id: nextTransactionId(), method: 'INV', status: 'pending' },
        amount: 25,
      });
      expect(response.status).toBe(201);
    });
    const donation = JSON.parse(event.payload).data.donation;
    expect(donation.payment).toMatchObject({ method: 'INV', status: 'pending' });
    expect(donation.amount).toBe(25);
    expect(isValidQrReference(donation.invoice)).toBe(true);
    expect(donation.donor).not.toHaveProperty('custom_fields');
  });

  test('unknown or inactive recurring donations, a foreign method and a reused transaction id are refused', async () => {
    const recurringId = await startRecurring('TWI', 'recurring-refusals@example.ch');
    const post = (body: unknown) => app.request('POST', '/platform/recurring-payments', body);
    expect((await post({ recurring_id: 999999, payment: { transaction_id: nextTransactionId() } })).status).toBe(404);
    const wrongMethod = await post({ recurring_id: recurringId, payment: { transaction_id: nextTransactionId(), method: 'VIS' } });
    expect(wrongMethod.status).toBe(400);
    expect(wrongMethod.body.error).toMatch(/payment.method: must be TWI/);
    const wrongStatus = await post({ recurring_id: recurringId, payment: { transaction_id: nextTransactionId(), status: 'pending' } });
    expect(wrongStatus.status).toBe(400);
    const taken = (await postCheckout(checkoutBody())).body.transaction_id;
    expect((await post({ recurring_id: recurringId, payment: { transaction_id: taken } })).status).toBe(409);
    await app.db('recurring_donations').where({ id: recurringId }).update({ active: false });
    expect((await post({ recurring_id: recurringId, payment: { transaction_id: nextTransactionId() } })).status).toBe(409);
  });

  test('a recurring donation cannot be started in a multi-checkout, and needs its interval', async () => {
    const multi = await postCheckout(
      checkoutBody({
        positions: [
          { amount: 20, campaign_id: water, payment_type: 'recurring_init', recurring: { interval: 'monthly' } },
          { amount: 10, campaign_id: school },
        ],
      }),
    );
    expect(multi.status).toBe(400);
    expect(multi.body.error).toMatch(/positions.0.payment_type: a recurring donation cannot be part of a multi-checkout/);
    const noInterval = await postCheckout(checkoutBody({ positions: [{ amount: 20, payment_type: 'recurring_init' }] }));
    expect(noInterval.status).toBe(400);
    expect(noInterval.body.error).toMatch(/positions.0.recurring/);
  });
});

describe('reconciliations', () => {
  const reconcile = (body: unknown) => app.request('POST', '/platform/reconciliations', body);

  test('v1: one event per position with its share; the shares sum exactly; a second report is a 409', async () => {
    await useEndpoint({ payload_version: 'v1' });
    const checkout = await postCheckout(
      checkoutBody({ positions: [{ amount: 33.33, campaign_id: water }, { amount: 33.33, campaign_id: school }, { amount: 33.34 }] }),
    );
    const originating = await app.db('webhook_events').where('source_key', 'like', `donation.completed:donation:%`).orderBy('id', 'desc').first();
    expect(originating.status).toBe('waiting');

    let response!: Awaited<ReturnType<TestApp['request']>>;
    const events = await eventsCreatedBy(async () => {
      response = await reconcile({ transaction_id: checkout.body.transaction_id, paid_out_amount: 97.01, fee_amount: 2.99, payout_currency: 'EUR' });
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ number: checkout.body.number, paid_out_amount: 97.01, fee_amount: 2.99, payout_currency: 'EUR' });
    expect(events.map((e) => e.event_type)).toEqual(['donation.reconciled', 'donation.reconciled', 'donation.reconciled']);
    const payments = events.map((e) => JSON.parse(e.payload).data.donation.payment);
    expect(payments.every((p) => p.reconciled === true)).toBe(true);
    expect(payments.reduce((sum, p) => sum + Math.round(p.paid_out_amount * 100), 0)).toBe(9701);
    expect(payments.reduce((sum, p) => sum + Math.round(p.fee_amount * 100), 0)).toBe(299);
    // The payload is the originating event's plus the three payment fields.
    const first = JSON.parse(events[0].payload).data.donation;
    const { paid_out_amount: _p, fee_amount: _f, reconciled: _r, ...payment } = first.payment;
    const originatingFirst = (await app.db('webhook_events').where({ source_key: `donation.completed:donation:${checkout.body.number}` }).first())
      .payload;
    expect({ ...first, payment }).toEqual(JSON.parse(originatingFirst).data.donation);

    const again = await eventsCreatedBy(async () => {
      const second = await reconcile({ transaction_id: checkout.body.transaction_id, paid_out_amount: 97.01, fee_amount: 2.99, payout_currency: 'EUR' });
      expect(second.status).toBe(409);
      expect(second.body.code).toBe('already_reconciled');
    });
    expect(again).toEqual([]);
  });

  test('v2: a fee of three cents over six equal positions: no negative share, the shares sum to the fee', async () => {
    await useEndpoint({ payload_version: 'v2' });
    const checkout = await postCheckout(checkoutBody({ positions: Array.from({ length: 6 }, () => ({ amount: 10, campaign_id: water })) }));
    const events = await eventsCreatedBy(() =>
      reconcile({ transaction_id: checkout.body.transaction_id, paid_out_amount: 59.97, fee_amount: 0.03, payout_currency: 'CHF' }),
    );
    const payments = events.map((e) => JSON.parse(e.payload).data.donation.payment);
    expect(payments.map((p) => p.fee_amount)).toEqual([0.01, 0, 0.01, 0, 0.01, 0]);
    expect(payments.map((p) => p.paid_out_amount)).toEqual([10, 9.99, 10, 9.99, 10, 9.99]);
  });

  test('two reports of one payment at the same moment: one is recorded, the other is a 409', async () => {
    await useEndpoint({ payload_version: 'v2' });
    const checkout = await postCheckout(checkoutBody());
    const body = { transaction_id: checkout.body.transaction_id, paid_out_amount: 48.5, fee_amount: 1.5, payout_currency: 'CHF' };
    let statuses: number[] = [];
    const events = await eventsCreatedBy(async () => {
      statuses = (await Promise.all([reconcile(body), reconcile(body), reconcile(body)])).map((r) => r.status).sort((a, b) => a - b);
    });
    expect(statuses).toEqual([201, 409, 409]);
    expect(events).toHaveLength(1);
  });

  test('v2.1: one event with positions and the total amounts', async () => {
    await useEndpoint({ payload_version: 'v2.1' });
    const checkout = await postCheckout(checkoutBody({ positions: [{ amount: 40, campaign_id: water }, { amount: 60, campaign_id: school }] }));
    const events = await eventsCreatedBy(() =>
      reconcile({ transaction_id: checkout.body.transaction_id, paid_out_amount: 97.1, fee_amount: 2.9, payout_currency: 'CHF' }),
    );
    expect(events).toHaveLength(1);
    const donation = JSON.parse(events[0].payload).data.donation;
    expect(donation.payment).toMatchObject({ paid_out_amount: 97.1, fee_amount: 2.9, reconciled: true });
    expect(donation.positions).toHaveLength(2);
  });

  test('the reconciled donor is the donor of the originating event, whatever the contact became since', async () => {
    await useEndpoint({ payload_version: 'v2' });
    const email = 'moving@example.ch';
    const [completed] = await eventsCreatedBy(() =>
      postCheckout(checkoutBody({ donor: { ...donor, email, newsletter: false, custom_fields: { Anlass: 'Umzug' } } })),
    );
    const originating = JSON.parse(completed.payload).data.donation;
    // Later the same donor gives again from a new address, and confirms a newsletter sign-up.
    await postCheckout(checkoutBody({ donor: { ...donor, email, street: 'Marktgasse', street_number: '3', postal_code: '3011', city: 'Bern' } }));
    const signUp = await app.request('POST', '/platform/newsletter-subscriptions', { email, language: 'de' });
    expect((await app.request('POST', `/platform/newsletter-subscriptions/${signUp.body.subscription_id}/confirm`)).status).toBe(201);
    expect(await app.db('contacts').where({ email }).first()).toMatchObject({ city: 'Bern', newsletter: true });

    const [reconciled] = await eventsCreatedBy(() =>
      reconcile({ transaction_id: originating.payment.transaction_id, paid_out_amount: 48.5, fee_amount: 1.5, payout_currency: 'CHF' }),
    );
    const { paid_out_amount: _p, fee_amount: _f, reconciled: _r, ...payment } = JSON.parse(reconciled.payload).data.donation.payment;
    expect({ ...JSON.parse(reconciled.payload).data.donation, payment }).toEqual(originating);
    expect(originating.donor).toMatchObject({ city: 'Zürich', street: 'Bahnhofstrasse', newsletter: false, custom_fields: { Anlass: 'Umzug' } });
  });

  test('QR invoices, pending or paid, and their recurring follow-ups are not reconcilable: 409, nothing written', async () => {
    await useEndpoint();
    const invoice = (status: string) =>
      postCheckout(checkoutBody({ payment: { transaction_id: nextTransactionId(), method: 'INV', status } }));
    const followUpOf = await postCheckout(
      checkoutBody({
        positions: [{ amount: 20, campaign_id: water, payment_type: 'recurring_init', recurring: { interval: 'yearly' } }],
        payment: { transaction_id: nextTransactionId(), method: 'INV', status: 'pending' },
      }),
    );
    const followUp = await app.request('POST', '/platform/recurring-payments', {
      recurring_id: followUpOf.body.donations[0].recurring_id,
      payment: { transaction_id: nextTransactionId() },
    });
    for (const payment of [(await invoice('pending')).body, (await invoice('completed')).body, followUp.body]) {
      const events = await eventsCreatedBy(async () => {
        const refused = await reconcile({ transaction_id: payment.transaction_id, paid_out_amount: 10, fee_amount: 0, payout_currency: 'CHF' });
        expect(refused.status).toBe(409);
        expect(refused.body).toEqual({ error: expect.stringMatching(/cannot be reconciled/), code: 'not_reconcilable' });
      });
      expect(events).toEqual([]);
    }
    expect(await app.db('reconciliations').whereIn('checkout_id', app.db('checkouts').where({ payment_method: 'INV' }).select('id'))).toEqual([]);
  });

  test('works whether or not the originating event exists, and refuses unknown payments and bad amounts', async () => {
    await useEndpoint({ events: ['donation.reconciled'] });
    const checkout = await postCheckout(checkoutBody());
    const events = await eventsCreatedBy(() =>
      reconcile({ transaction_id: checkout.body.transaction_id, paid_out_amount: 48.5, fee_amount: 1.5, payout_currency: 'CHF' }),
    );
    expect(events.map((e) => e.event_type)).toEqual(['donation.reconciled']);
    expect((await reconcile({ transaction_id: 'nobody', paid_out_amount: 1, fee_amount: 0, payout_currency: 'CHF' })).status).toBe(404);
    const bad = await reconcile({ transaction_id: checkout.body.transaction_id, paid_out_amount: 1.001, fee_amount: -1, payout_currency: 'chf' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/paid_out_amount.*fee_amount.*payout_currency/);
  });
});

describe('newsletter', () => {
  test('sign-up, first confirmation fires newsletter.subscribed with the contact data, a second click fires nothing', async () => {
    await useEndpoint({ payload_version: 'v1' });
    await postCheckout(checkoutBody({ donor: { ...donor, email: 'reader@example.ch', first_name: 'Lea', newsletter: false } }));
    app.clock.now = Date.parse('2025-03-30T00:30:00Z') / 1000;
    const signUp = await app.request('POST', '/platform/newsletter-subscriptions', {
      email: 'Reader@example.ch',
      language: 'fr',
      channel: 'form',
    });
    expect(signUp.status).toBe(201);
    expect(signUp.body).toMatchObject({ contact_id: expect.any(Number), confirmed: false, confirmed_at: null, channel: 'form' });
    const repeat = await app.request('POST', '/platform/newsletter-subscriptions', { email: 'reader@example.ch', language: 'fr' });
    expect(repeat.status).toBe(200);
    expect(repeat.body.subscription_id).toBe(signUp.body.subscription_id);

    const id = signUp.body.subscription_id;
    const events = await eventsCreatedBy(async () => {
      const confirmed = await app.request('POST', `/platform/newsletter-subscriptions/${id}/confirm`);
      expect(confirmed.status).toBe(201);
      expect(confirmed.body).toMatchObject({ confirmed: true, confirmed_at: '2025-03-30T00:30:00Z' });
    });
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0].payload)).toEqual({
      id: events[0].id,
      event: 'newsletter.subscribed',
      created_at: '2025-03-30T00:30:00Z',
      environment: 'prod',
      data: {
        newsletter_subscription: {
          subscription_id: id,
          contact_id: signUp.body.contact_id,
          gender: 'female',
          first_name: 'Lea',
          last_name: 'Muster',
          email: 'reader@example.ch',
          language: 'de',
          opt_in: true,
          opt_in_date: '2025-03-30T01:30:00+01:00',
        },
      },
    });
    expect((await app.db('contacts').where({ id: signUp.body.contact_id }).first()).newsletter).toBe(true);

    const secondClick = await eventsCreatedBy(async () => {
      const again = await app.request('POST', `/platform/newsletter-subscriptions/${id}/confirm`);
      expect(again.status).toBe(200);
      expect(again.body.confirmed_at).toBe('2025-03-30T00:30:00Z');
    });
    expect(secondClick).toEqual([]);
  });

  test('simultaneous sign-ups of one address create one sign-up; simultaneous clicks one event', async () => {
    await useEndpoint();
    const body = { email: 'twice@example.ch', language: 'de' };
    const signUps = await Promise.all([1, 2, 3].map(() => app.request('POST', '/platform/newsletter-subscriptions', body)));
    expect(signUps.map((r) => r.status).sort((a, b) => a - b)).toEqual([200, 200, 201]);
    expect(new Set(signUps.map((r) => r.body.subscription_id)).size).toBe(1);
    const path = `/platform/newsletter-subscriptions/${signUps[0].body.subscription_id}/confirm`;
    const events = await eventsCreatedBy(() => Promise.all([1, 2, 3].map(() => app.request('POST', path))));
    expect(events).toHaveLength(1);
  });

  test('unknown sign-ups are 404, malformed ids 400', async () => {
    expect((await app.request('POST', '/platform/newsletter-subscriptions/424242/confirm')).status).toBe(404);
    expect((await app.request('POST', '/platform/newsletter-subscriptions/abc/confirm')).status).toBe(400);
    expect((await app.request('POST', '/platform/newsletter-subscriptions/99999999999/confirm')).status).toBe(400);
  });
});

describe('shop orders', () => {
  const order = shopOrderBody;

  test('registered and guest orders both fire shop_order.completed; a repeat creates nothing', async () => {
    await useEndpoint({ payload_version: 'v2' });
    for (const type of ['registered', 'guest'] as const) {
      const body = order(type);
      let response!: Awaited<ReturnType<TestApp['request']>>;
      const events = await eventsCreatedBy(async () => {
        response = await app.request('POST', '/platform/shop-orders', body);
      });
      expect(response.status).toBe(201);
      expect(response.body.customer_type).toBe(type);
      expect(response.body.contact_id === null).toBe(type === 'guest');
      expect(events).toHaveLength(1);
      const shopOrder = JSON.parse(events[0].payload).data.shop_order;
      expect(shopOrder).toMatchObject({
        id: response.body.number,
        created_at: expect.stringMatching(/Z$/),
        customer: { ...customer, company: null, department: null, care_of: null, po_box: null },
        delivery_address: shopOrder.invoice_address,
        items: [{ article_number: 'KAL-2026', quantity: 2, unit_price_net: 18.5, unit_price_gross: 19.95, discount_percentage: 10, total_price_gross: 35.91 }],
        total_price_gross: 42.91,
        payment: { method: 'PAYPAL', status: 'completed' },
        shipping: { method: 'A-Post', cost: 7 },
      });
      const repeat = await eventsCreatedBy(async () => {
        expect((await app.request('POST', '/platform/shop-orders', body)).status).toBe(200);
      });
      expect(repeat).toEqual([]);
    }
  });

  test('invalid items are a 400 naming the field', async () => {
    const body = order('guest');
    body.items[0].quantity = 0;
    const response = await app.request('POST', '/platform/shop-orders', body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(/items.0.quantity/);
  });
});

describe('validation and access', () => {
  test('bad bodies are 400s that name the fields, and write nothing', async () => {
    const contactsBefore = await app.db('contacts').count('* as n');
    const cases: [unknown, RegExp][] = [
      [{}, /environment.*currency.*donor.*positions.*payment/],
      [checkoutBody({ positions: [{ amount: 10.005 }] }), /positions.0.amount: must be a number with at most 2 decimals/],
      // Exactly two decimals: close to a cent is not a cent (was rounded to 50.00).
      [checkoutBody({ positions: [{ amount: 50.0000000001 }] }), /positions.0.amount: must be a number with at most 2 decimals/],
      [checkoutBody({ positions: [{ amount: 1_000_000_000 }] }), /positions.0.amount: .*999999999.99/],
      [checkoutBody({ positions: [{ amount: 0 }] }), /positions.0.amount: must be greater than 0/],
      [checkoutBody({ positions: [] }), /positions/],
      [checkoutBody({ currency: 'chf' }), /currency/],
      [checkoutBody({ environment: 'LIVE' }), /environment/],
      [checkoutBody({ donor: { ...donor, email: 'not-an-email' } }), /donor.email/],
      [checkoutBody({ donor: { ...donor, gender: 'other' } }), /donor.gender/],
      [checkoutBody({ payment: { transaction_id: 'x', method: 'VIS', status: 'pending' } }), /payment.status: only a QR invoice/],
      [checkoutBody({ positions: [{ amount: 10, campaign_id: 987654 }] }), /positions.0.campaign_id: campaign 987654 does not exist/],
      [[1, 2], /expected object/],
      [checkoutBody({ positions: [{ amount: 10, campaign_id: 2 ** 40 }] }), /positions.0.campaign_id/],
      [checkoutBody({ positions: [{ amount: 1e12 }] }), /positions.0.amount/],
      [checkoutBody({ donor: { ...donor, city: 'Zü\u0000rich' } }), /donor.city: must not contain NUL/],
      [checkoutBody({ donor: { ...donor, custom_fields: { Anlass: 'a\u0000' } } }), /donor.custom_fields.Anlass/],
    ];
    for (const [body, message] of cases) {
      const response = await postCheckout(body);
      expect([response.status, response.body.error]).toEqual([400, expect.stringMatching(message)]);
    }
    expect(await app.db('contacts').count('* as n')).toEqual(contactsBefore);
  });

  test('an amount whose digits JSON\'s double cannot keep is a 400, not the rounded amount (50.000000000000001 is not 50)', async () => {
    const contactsBefore = await app.db('contacts').count('* as n');
    const withAmount = (literal: string) => JSON.stringify(checkoutBody({ positions: [{ amount: 12.34 }] })).replace('12.34', literal);
    for (const literal of ['50.000000000000001', '0.010000000000000000001', '999999999.99000001', '1.00000000000000000000000000001']) {
      const response = await postCheckout(withAmount(literal));
      expect([response.status, response.body.code, response.body.error]).toEqual([400, 'invalid_body', expect.stringContaining(`The number ${literal}`)]);
    }
    expect(await app.db('contacts').count('* as n')).toEqual(contactsBefore);
    // Other spellings of what a double holds exactly are amounts like any other.
    for (const literal of ['1.5E3', '99999999999e-2', '12.340', '0.1']) {
      expect((await postCheckout(withAmount(literal))).status).toBe(201);
    }
  });

  test('a body linking to a campaign or contact that does not exist is a 400 with its own code (docs/platform-api.md)', async () => {
    const campaign = await postCheckout(checkoutBody({ positions: [{ amount: 10, campaign_id: 987654 }] }));
    expect([campaign.status, campaign.body.code]).toEqual([400, 'unknown_campaign']);
    const contact = await app.request('POST', '/platform/newsletter-subscriptions', { email: 'nobody@example.ch', language: 'de', contact_id: 987654 });
    expect([contact.status, contact.body.code]).toEqual([400, 'unknown_contact']);
  });

  test('currency, country and language are checked against the ISO lists, not only by shape', async () => {
    const tablesBefore = await Promise.all(['contacts', 'checkouts', 'newsletter_subscriptions'].map((table) => app.db(table).count('* as n')));
    const refused: [Record<string, unknown>, string, string][] = [
      ...['XYZ', 'ABC', 'QQQ', 'chf', 'CHFX'].map((currency): [Record<string, unknown>, string, string] => [
        checkoutBody({ currency }),
        'currency',
        'must be an ISO 4217 code such as CHF',
      ]),
      ...['ZZ', 'XX', 'QQ', 'EU', 'UK', 'AA', 'ch'].map((country): [Record<string, unknown>, string, string] => [
        checkoutBody({ donor: { ...donor, country } }),
        'donor.country',
        'must be an ISO 3166-1 alpha-2 code such as CH',
      ]),
      ...['zz', 'xx', 'iw', 'qa', 'DE', 'deu'].map((language): [Record<string, unknown>, string, string] => [
        checkoutBody({ donor: { ...donor, language } }),
        'donor.language',
        'must be an ISO 639-1 code such as de',
      ]),
    ];
    for (const [body, name, message] of refused) {
      const response = await postCheckout(body);
      expect([name, response.status, response.body.code, response.body.problems]).toEqual([
        name,
        400,
        'invalid_body',
        [{ in: 'body', name, message }],
      ]);
    }
    const signUp = await app.request('POST', '/platform/newsletter-subscriptions', { email: 'iso@example.ch', language: 'zz' });
    expect([signUp.status, signUp.body.problems]).toEqual([400, [{ in: 'body', name: 'language', message: 'must be an ISO 639-1 code such as de' }]]);
    expect(await Promise.all(['contacts', 'checkouts', 'newsletter_subscriptions'].map((table) => app.db(table).count('* as n')))).toEqual(tablesBefore);

    // Real codes beyond the everyday ones pass: another currency, Liechtenstein, Kosovo (XK, see docs), Romansh.
    for (const overrides of [
      { currency: 'EUR', donor: { ...donor, country: 'LI', language: 'rm' } },
      { currency: 'USD', donor: { ...donor, country: 'XK', language: 'sq' } },
    ]) {
      expect((await postCheckout(checkoutBody(overrides))).status).toBe(201);
    }
  });

  test('malformed JSON is a 400, another content type a 415', async () => {
    const malformed = await postCheckout('{"environment": ');
    expect(malformed.status).toBe(400);
    const response = await fetch(`${app.baseUrl}/platform/checkouts`, {
      method: 'POST',
      headers: { ...app.staff(), 'Content-Type': 'text/plain' },
      body: 'hello',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({ error: 'Content-Type must be application/json', code: 'unsupported_media_type' });
  });

  test('without credentials 401, without staff permission 403, wrong method 405', async () => {
    expect((await app.request('POST', '/platform/checkouts', checkoutBody(), {})).status).toBe(401);
    expect((await app.request('POST', '/platform/checkouts', checkoutBody(), app.nonStaff())).status).toBe(403);
    const wrongMethod = await app.request('GET', '/platform/checkouts');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.code).toBe('method_not_allowed');
  });
});

test('GET /platform/campaigns lists the campaigns a form may name with their link ids, to staff only', async () => {
  await insertCampaignLinks(app.db, water, [{ id: 'wasser-2025' }, { id: 'wasser-2024', active: false }]);
  const listed = await app.request('GET', '/platform/campaigns');
  expect(listed.status).toBe(200);
  expect(listed.body.results).toEqual(
    expect.arrayContaining([
      { id: water, title: 'Wasser für alle', link_ids: ['wasser-2024', 'wasser-2025'] },
      { id: school, title: 'Schulbildung', link_ids: [] },
    ]),
  );
  expect((await app.request('GET', '/platform/campaigns', undefined, app.nonStaff())).status).toBe(403);
  expect((await app.request('GET', '/platform/campaigns', undefined, {})).status).toBe(401);
});
