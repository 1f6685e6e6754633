import { checkoutBody, eventsCreatedBy, nextTransactionId, shopOrderBody, useEndpoint } from '../support/platform-calls';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * Every amount the platform API takes is an amount of its currency (ISO 4217 minor units, at most the two decimals
 * every amount carries), and codes that name no currency are refused (docs/platform-api.md).
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

const post = (path: string, body: unknown) => app.request('POST', `/platform/${path}`, body);

/** The problems of a 400 answer, as `name: message`. */
async function refusal(path: string, body: unknown): Promise<string[]> {
  const response = await post(path, body);
  expect([response.status, response.body.code]).toEqual([400, 'invalid_body']);
  return response.body.problems.map((problem: { name: string; message: string }) => `${problem.name}: ${problem.message}`);
}

const counts = () => Promise.all(['contacts', 'checkouts', 'shop_orders', 'reconciliations', 'webhook_events'].map(async (table) => (await app.db(table).count('* as n'))[0].n));

describe('codes that name no currency', () => {
  test('metals, units of account, funds, XTS and XXX are refused wherever a currency is given; nothing is written', async () => {
    const paid = await post('checkouts', checkoutBody());
    const before = await counts();
    for (const code of ['XXX', 'XTS', 'XAU', 'XAG', 'XPT', 'XPD', 'XDR', 'XSU', 'XUA', 'XBA', 'CHE', 'CHW', 'USN', 'CLF', 'UYW']) {
      const message = `must be an ISO 4217 code such as CHF`;
      expect([code, await refusal('checkouts', checkoutBody({ currency: code }))]).toEqual([code, [`currency: ${message}`]]);
      expect([code, await refusal('shop-orders', { ...shopOrderBody(), currency: code })]).toEqual([code, [`currency: ${message}`]]);
      const report = { transaction_id: paid.body.transaction_id, paid_out_amount: 48, fee_amount: 2, payout_currency: code };
      expect([code, await refusal('reconciliations', report)]).toEqual([code, [`payout_currency: ${message}`]]);
    }
    expect(await counts()).toEqual(before);
  });

  test('currencies with other minor units are accepted: yen, won, dinars, CFA franc, Caribbean guilder (2025)', async () => {
    for (const [currency, amount] of [['JPY', 5000], ['KRW', 50000], ['KWD', 15.5], ['BHD', 20], ['XOF', 3000], ['XCD', 12.25], ['XCG', 12.5]] as const) {
      const response = await post('checkouts', checkoutBody({ currency, positions: [{ amount }] }));
      expect([currency, response.status, response.body.total_amount]).toEqual([currency, 201, amount]);
    }
  });
});

describe('amounts in the currency’s minor units', () => {
  test('a yen amount has no decimals: JPY 1.55 is refused on every position, 1500 and 1e3 are taken', async () => {
    const before = await counts();
    expect(await refusal('checkouts', checkoutBody({ currency: 'JPY', positions: [{ amount: 1.55 }, { amount: 1000 }, { amount: 0.5 }] }))).toEqual([
      'positions.0.amount: must be a whole number: JPY has no decimals',
      'positions.2.amount: must be a whole number: JPY has no decimals',
    ]);
    expect(await counts()).toEqual(before);
    const taken = await post('checkouts', checkoutBody({ currency: 'JPY', positions: [{ amount: 1500 }, { amount: 1e3 }] }));
    expect(taken.status).toBe(201);
    expect(taken.body.donations.map((donation: { amount: number }) => donation.amount)).toEqual([1500, 1000]);
  });

  test('a three-decimal currency takes at most the two decimals every amount carries', async () => {
    expect(await refusal('checkouts', checkoutBody({ currency: 'KWD', positions: [{ amount: 10.125 }] }))).toEqual([
      'positions.0.amount: must be a number with at most 2 decimals',
    ]);
    expect((await post('checkouts', checkoutBody({ currency: 'KWD', positions: [{ amount: 10.12 }] }))).body.total_amount).toBe(10.12);
  });

  test('not numbers, negative zero and tiny fractions: refused by the same rules, whatever their spelling', async () => {
    for (const [currency, amount] of [['JPY', '1500'], ['JPY', '1e3'], ['JPY', -0], ['JPY', 1e-9 + 1500.5], ['JPY', 0.001], ['JPY', Number.MIN_VALUE], ['CHF', Number.MIN_VALUE], ['CHF', 1e-9]]) {
      // A denormal positive number once passed "greater than 0" as a number and reached the database as 0.00: a 500.
      const response = await post('checkouts', checkoutBody({ currency, positions: [{ amount }] }));
      expect([currency, amount, response.status]).toEqual([currency, amount, 400]);
    }
    // JSON spells numbers in many ways; what counts is the number: 1.5E3 and 1500.00 are 1500 yen.
    for (const spelling of ['1.5E3', '1500.00', '15e2']) {
      const body = JSON.stringify(checkoutBody({ currency: 'JPY' })).replace('"amount":50', `"amount":${spelling}`);
      const spelled = await app.send('POST', '/platform/checkouts', body);
      expect([spelling, spelled.status, ((await spelled.json()) as { total_amount: number }).total_amount]).toEqual([spelling, 201, 1500]);
    }
  });

  test('a shop order in yen: every price, total and the shipping cost are whole yen', async () => {
    const order = shopOrderBody();
    const yen = {
      ...order,
      currency: 'JPY',
      items: [{ article_number: 'KAL-2026', quantity: 2, unit_price_net: 1850.5, unit_price_gross: 1995, total_price_gross: 3990.1 }],
      total_price_gross: 4690.99,
      total_vat: 290,
      total_discount: 0.5,
      shipping: { method: 'A-Post', cost: 700.5 },
    };
    expect(await refusal('shop-orders', yen)).toEqual([
      'items.0.unit_price_net: must be a whole number: JPY has no decimals',
      'items.0.total_price_gross: must be a whole number: JPY has no decimals',
      'total_price_gross: must be a whole number: JPY has no decimals',
      'total_discount: must be a whole number: JPY has no decimals',
      'shipping.cost: must be a whole number: JPY has no decimals',
    ]);
    const whole = { ...yen, items: [{ ...yen.items[0], unit_price_net: 1850, total_price_gross: 3990 }], total_price_gross: 4690, total_discount: 0, shipping: { method: 'A-Post', cost: 700 } };
    const response = await post('shop-orders', whole);
    expect([response.status, response.body.total_price_gross]).toEqual([201, 4690]);
  });

  test('a follow-up of a recurring donation in yen: an amount given is whole yen', async () => {
    const started = await post(
      'checkouts',
      checkoutBody({ currency: 'JPY', positions: [{ amount: 3000, payment_type: 'recurring_init', recurring: { interval: 'monthly' } }] }),
    );
    const recurringId = started.body.donations[0].recurring_id;
    const before = await counts();
    const refused = await post('recurring-payments', { recurring_id: recurringId, payment: { transaction_id: nextTransactionId() }, amount: 2999.5 });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: 'amount: must be a whole number: JPY has no decimals',
      code: 'invalid_body',
      problems: [{ in: 'body', name: 'amount', message: 'must be a whole number: JPY has no decimals' }],
    });
    expect(await counts()).toEqual(before);
    const followUp = await post('recurring-payments', { recurring_id: recurringId, payment: { transaction_id: nextTransactionId() }, amount: 3500 });
    expect([followUp.status, followUp.body.total_amount]).toEqual([201, 3500]);
  });
});

describe('reconciliation amounts', () => {
  test('a payout in yen is whole yen; v1 splits it over the positions in whole yen that sum to the totals', async () => {
    await useEndpoint(app, { payload_version: 'v1' });
    const paid = await post('checkouts', checkoutBody({ positions: [{ amount: 10 }, { amount: 10 }, { amount: 10 }] }));
    const report = { transaction_id: paid.body.transaction_id, payout_currency: 'JPY' };
    expect(await refusal('reconciliations', { ...report, paid_out_amount: 4950.5, fee_amount: 0.25 })).toEqual([
      'paid_out_amount: must be a whole number: JPY has no decimals',
      'fee_amount: must be a whole number: JPY has no decimals',
    ]);
    const events = await eventsCreatedBy(app, async () => {
      expect((await post('reconciliations', { ...report, paid_out_amount: 1000, fee_amount: 2 })).status).toBe(201);
    });
    const payments = events.map((event) => JSON.parse(event.payload).data.donation.payment);
    // Split in cents, 1000 yen would have been 333.33, 333.34 and 333.33 yen, and a fee of 2 yen 0.67, 0.66, 0.67.
    expect(payments.map((payment) => payment.paid_out_amount)).toEqual([333, 334, 333]);
    expect(payments.map((payment) => payment.fee_amount)).toEqual([1, 0, 1]);
  });

  test('a fee of negative zero is a fee of 0, shown as 0', async () => {
    await useEndpoint(app, { payload_version: 'v2.1' });
    const paid = await post('checkouts', checkoutBody());
    const body = `{"transaction_id":"${paid.body.transaction_id}","paid_out_amount":50,"fee_amount":-0,"payout_currency":"CHF"}`;
    const [event] = await eventsCreatedBy(app, async () => {
      const response = await app.send('POST', '/platform/reconciliations', body);
      expect(await response.text()).toMatch(/"fee_amount":0,/);
    });
    expect(event.payload).toMatch(/"fee_amount":0,/);
  });
});
