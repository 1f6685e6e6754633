import { PLATFORM_DONOR as donor } from '../support/platform-donor';
import { checkoutBody, eventsCreatedBy, nextTransactionId, shopOrderBody, useEndpoint } from '../support/platform-calls';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * The transaction id as idempotency key (docs/platform-api.md): a repeat of the same payment is a 200 with its
 * record, another payment under a used id a 409, and one namespace of ids for donation payments and shop orders.
 */

let app: TestApp;
let water: number;

beforeAll(async () => {
  app = await startTestApp();
  [{ id: water }] = await app.db('campaigns').insert([{ title: 'Wasser für alle' }, { title: 'Schulbildung' }]).returning('id');
  await useEndpoint(app, { payload_version: 'v2' });
});

afterAll(async () => {
  await app?.close();
});

const post = (path: string, body: unknown) => app.request('POST', `/platform/${path}`, body);

const TABLES = ['contacts', 'checkouts', 'donations', 'recurring_donations', 'shop_orders', 'transaction_ids', 'webhook_events'];
const counts = async () => Object.fromEntries(await Promise.all(TABLES.map(async (table) => [table, (await app.db(table).count('* as n'))[0].n])));

/** Each repeat is answered as expected, and none writes a row or creates an event. */
async function expectRepeats(path: string, repeats: Array<[body: unknown, status: number, code?: string, differing?: string[]]>, record: unknown) {
  const before = await counts();
  for (const [body, status, code, differing] of repeats) {
    const response = await post(path, body);
    if (status === 200) {
      expect([body, response.status, response.body]).toEqual([body, 200, record]);
    } else {
      const problems = differing?.map((name) => ({ in: 'body', name, message: 'differs from the payment recorded under this transaction id' }));
      expect([body, response.status, response.body.code, response.body.problems]).toEqual([body, status, code, problems]);
    }
  }
  expect(await counts()).toEqual(before);
}

describe('a repeated transaction id', () => {
  test('checkout: another environment, amount, currency, donor, method or position is a 409 naming the field', async () => {
    const body = checkoutBody({ positions: [{ amount: 50, campaign_id: water, purpose: 'Brunnenbau' }] });
    const first = await post('checkouts', body);
    expect(first.status).toBe(201);
    const position = body.positions[0];
    const reused = (overrides: Record<string, unknown>, differing: string[]): [unknown, number, string, string[]] => [
      { ...body, ...overrides },
      409,
      'transaction_id_reused',
      differing,
    ];
    await expectRepeats(
      'checkouts',
      [
        reused({ environment: 'TEST' }, ['environment']),
        reused({ currency: 'EUR' }, ['currency']),
        reused({ donor: { ...donor, email: 'someone.else@example.ch' } }, ['donor.email']),
        reused({ payment: { ...body.payment, method: 'VIS' } }, ['payment.method']),
        reused({ positions: [{ ...position, amount: 60 }] }, ['positions.0.amount']),
        reused({ positions: [{ ...position, amount: 50.01 }] }, ['positions.0.amount']),
        reused({ positions: [{ ...position, campaign_id: null }] }, ['positions.0.campaign_id']),
        reused({ positions: [{ ...position, payment_type: 'crowdfunding', purpose: null }] }, ['positions.0.purpose', 'positions.0.payment_type']),
        // Another number of positions: the list as a whole differs.
        reused({ positions: [position, { amount: 5 }] }, ['positions']),
        reused({ environment: 'TEST', currency: 'EUR', positions: [{ ...position, amount: 60 }] }, ['environment', 'currency', 'positions.0.amount']),
      ],
      first.body,
    );
  });

  test('checkout: a repeat that differs everywhere names the first ten fields, and counts the others', async () => {
    const positions = Array.from({ length: 12 }, (_, index) => ({ amount: 10 + index, campaign_id: water }));
    const body = checkoutBody({ donor: { ...donor, email: 'twelve.positions@example.ch' }, positions });
    expect((await post('checkouts', body)).status).toBe(201);
    const repeat = await post('checkouts', { ...body, positions: positions.map((position) => ({ ...position, amount: 99 })) });
    expect([repeat.status, repeat.body.problems.map((problem: { name: string }) => problem.name)]).toEqual([
      409,
      Array.from({ length: 10 }, (_, index) => `positions.${index}.amount`),
    ]);
    expect(repeat.body.error).toMatch(/positions\.9\.amount and 2 more fields differ$/);
  });

  test('checkout: what is no part of the payment may differ; the record stands as first recorded', async () => {
    const body = checkoutBody({
      donor: { ...donor, email: 'same.payment@example.ch' },
      positions: [{ amount: 50, campaign_id: water, purpose: 'Brunnenbau' }],
      payment: { transaction_id: nextTransactionId(), method: 'INV', status: 'pending' },
    });
    const first = await post('checkouts', body);
    const same = (overrides: Record<string, unknown>): [unknown, number] => [{ ...body, ...overrides }, 200];
    await expectRepeats(
      'checkouts',
      [
        same({}),
        // The same contact: e-mail addresses are compared as contacts are found, case-insensitively.
        same({ donor: { ...body.donor, email: 'Same.Payment@EXAMPLE.ch' } }),
        same({ donor: { ...body.donor, first_name: 'Annamarie', city: 'Bern', newsletter: false, custom_fields: { Anlass: 'Hochzeit' } } }),
        // A QR invoice paid since: this API records no status transitions, and the answer shows it still pending.
        same({ payment: { ...body.payment, status: 'completed' } }),
        same({ invoice_reference_mode: 'text', invoice_reference_text: 'Spende' }),
        // Numbers are compared as amounts: 5e1 and 50.00 are 50.
        same({ positions: [{ ...body.positions[0], amount: 5e1 }] }),
      ],
      first.body,
    );
  });

  test('checkout: a look-alike of the donor’s address is another donor', async () => {
    const body = checkoutBody({ donor: { ...donor, email: 'kim@example.ch' } });
    await post('checkouts', body);
    // The Kelvin sign lower-cases to k in Unicode; the address is refused before any comparison (ASCII only).
    const kelvin = await post('checkouts', { ...body, donor: { ...body.donor, email: '\u212Aim@example.ch' } });
    expect([kelvin.status, kelvin.body.code]).toEqual([400, 'invalid_body']);
    // Surrounding blanks are trimmed, as from every text field: the same address, so the same payment.
    const padded = await post('checkouts', { ...body, donor: { ...body.donor, email: ' kim@example.ch\u00a0' } });
    expect(padded.status).toBe(200);
    const other = await post('checkouts', { ...body, donor: { ...body.donor, email: 'kim@example.com' } });
    expect([other.status, other.body.code]).toEqual([409, 'transaction_id_reused']);
  });

  test('ids that Postgres would store alike are refused, not taken for a recorded one', async () => {
    // An unpaired surrogate is stored as U+FFFD: \ud800 and \udbff would be one id, and the second a repeat.
    const before = await counts();
    for (const transactionId of ['card-\ud800', 'card-\udbff', '\udc00card']) {
      const body = checkoutBody({ payment: { transaction_id: transactionId, method: 'TWI', status: 'completed' } });
      const response = await post('checkouts', body);
      expect([response.status, response.body.problems?.[0]?.name]).toEqual([400, 'payment.transaction_id']);
    }
    const order = await post('shop-orders', { ...shopOrderBody(), payment: { transaction_id: 'order-\ud800', method: 'PAYPAL' } });
    expect([order.status, order.body.code]).toEqual([400, 'invalid_body']);
    expect(await counts()).toEqual(before);
  });

  test('checkout: a recurring donation started under the id is the same only with its interval', async () => {
    const position = { amount: 20, campaign_id: water, payment_type: 'recurring_init', recurring: { interval: 'monthly' } };
    const body = checkoutBody({ positions: [position] });
    const first = await post('checkouts', body);
    await expectRepeats(
      'checkouts',
      [
        [body, 200],
        [{ ...body, positions: [{ ...position, recurring: { interval: 'yearly' } }] }, 409, 'transaction_id_reused', ['positions.0.recurring.interval']],
      ],
      first.body,
    );
  });

  test('recurring follow-up: another recurring donation, amount or method is a 409; the default amount is the same', async () => {
    const start = (email: string) =>
      post(
        'checkouts',
        checkoutBody({ donor: { ...donor, email }, positions: [{ amount: 20, payment_type: 'recurring_init', recurring: { interval: 'monthly' } }] }),
      );
    const recurringId = (await start('follow-up@example.ch')).body.donations[0].recurring_id;
    const otherRecurringId = (await start('other-follow-up@example.ch')).body.donations[0].recurring_id;
    const body = { recurring_id: recurringId, payment: { transaction_id: nextTransactionId() } };
    const first = await post('recurring-payments', body);
    expect(first.status).toBe(201);
    await expectRepeats(
      'recurring-payments',
      [
        [body, 200],
        [{ ...body, amount: 20 }, 200],
        [{ ...body, payment: { ...body.payment, method: 'TWI', status: 'completed' } }, 200],
        [{ ...body, amount: 25 }, 409, 'transaction_id_reused', ['amount']],
        [{ ...body, recurring_id: otherRecurringId }, 409, 'transaction_id_reused', ['recurring_id']],
        [{ ...body, payment: { ...body.payment, method: 'VIS' } }, 409, 'transaction_id_reused', ['payment.method']],
      ],
      first.body,
    );
  });

  test('shop order: another customer, item or amount is a 409; names and addresses may differ', async () => {
    const body = shopOrderBody();
    const first = await post('shop-orders', body);
    expect(first.status).toBe(201);
    const [item] = body.items;
    await expectRepeats(
      'shop-orders',
      [
        [body, 200],
        [{ ...body, customer: { ...body.customer, email: 'RETO.brunner@example.ch', first_name: 'Reto A.', phone: null } }, 200],
        [{ ...body, shipping: { ...body.shipping, method: 'B-Post' } }, 200],
        [{ ...body, customer_type: 'guest' }, 409, 'transaction_id_reused', ['customer_type']],
        [{ ...body, customer: { ...body.customer, email: 'anna@example.ch' } }, 409, 'transaction_id_reused', ['customer.email']],
        [{ ...body, items: [{ ...item, quantity: 3 }] }, 409, 'transaction_id_reused', ['items.0.quantity']],
        [{ ...body, items: [{ ...item, article_number: 'KAL-2027', unit_price_net: 18 }] }, 409, 'transaction_id_reused', ['items.0.article_number', 'items.0.unit_price_net']],
        [{ ...body, items: [item, item] }, 409, 'transaction_id_reused', ['items']],
        [{ ...body, total_price_gross: 42.9 }, 409, 'transaction_id_reused', ['total_price_gross']],
        [{ ...body, shipping: { ...body.shipping, cost: 0 } }, 409, 'transaction_id_reused', ['shipping.cost']],
        [{ ...body, environment: 'TEST', currency: 'EUR' }, 409, 'transaction_id_reused', ['environment', 'currency']],
      ],
      first.body,
    );
  });
});

describe('one namespace of transaction ids', () => {
  test('an id used by one kind of payment is a 409 transaction_id_in_use for every other kind', async () => {
    const checkout = await post('checkouts', checkoutBody({ donor: { ...donor, email: 'namespace@example.ch' }, positions: [{ amount: 20, payment_type: 'recurring_init', recurring: { interval: 'monthly' } }] }));
    const recurringId = checkout.body.donations[0].recurring_id;
    const followUp = await post('recurring-payments', { recurring_id: recurringId, payment: { transaction_id: nextTransactionId() } });
    const order = await post('shop-orders', shopOrderBody());
    const before = await counts();
    const attempts: Array<[string, unknown]> = [
      ['shop-orders', { ...shopOrderBody(), payment: { transaction_id: checkout.body.transaction_id, method: 'PAYPAL' } }],
      ['shop-orders', { ...shopOrderBody(), payment: { transaction_id: followUp.body.transaction_id, method: 'PAYPAL' } }],
      ['checkouts', checkoutBody({ payment: { transaction_id: order.body.transaction_id, method: 'TWI' } })],
      ['checkouts', checkoutBody({ payment: { transaction_id: followUp.body.transaction_id, method: 'TWI' } })],
      ['recurring-payments', { recurring_id: recurringId, payment: { transaction_id: order.body.transaction_id } }],
      ['recurring-payments', { recurring_id: recurringId, payment: { transaction_id: checkout.body.transaction_id } }],
    ];
    for (const [path, body] of attempts) {
      const response = await post(path, body);
      expect([path, response.status, response.body.code]).toEqual([path, 409, 'transaction_id_in_use']);
    }
    expect(await counts()).toEqual(before);
  });

  test('the database refuses a shop order under a checkout’s id, whoever writes it', async () => {
    const checkout = await post('checkouts', checkoutBody());
    const order = await app.db('shop_orders').where({ transaction_id: (await post('shop-orders', shopOrderBody())).body.transaction_id }).first();
    const { id: _id, number: _number, ...columns } = order;
    await expect(app.db('shop_orders').insert({ ...columns, number: 'S-copy', transaction_id: checkout.body.transaction_id })).rejects.toThrow(
      /transaction_ids_pkey/,
    );
    // Renaming an order's id to a checkout's is refused too; renaming it to a free one frees the old id.
    await expect(app.db('shop_orders').where({ id: order.id }).update({ transaction_id: checkout.body.transaction_id })).rejects.toThrow(
      /transaction_ids_pkey/,
    );
    await app.db('shop_orders').where({ id: order.id }).update({ transaction_id: 'renamed-by-hand' });
    expect(await app.db('transaction_ids').whereIn('transaction_id', [order.transaction_id, 'renamed-by-hand'])).toEqual([
      { transaction_id: 'renamed-by-hand', holder: 'shop_order' },
    ]);
  });
});

describe('30 calls at once under one transaction id', () => {
  /** Statuses of the answers, counted, and the rows and events the calls made. */
  async function race(calls: Array<[string, unknown]>) {
    const before = await counts();
    let answers: Array<{ status: number; body: any }> = [];
    const events = await eventsCreatedBy(app, async () => {
      answers = await Promise.all(calls.map(([path, body]) => post(path, body)));
    });
    const after = await counts();
    const statuses: Record<string, number> = {};
    for (const answer of answers) {
      const key = `${answer.status}${answer.body.code ? ` ${answer.body.code}` : ''}`;
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
    return { answers, statuses, events, added: (table: string) => after[table] - before[table] };
  }

  test('identical: one is recorded, the others answer 200 with the same record; one row, one event', async () => {
    const body = checkoutBody({ donor: { ...donor, email: 'identical-race@example.ch' } });
    const { answers, statuses, events, added } = await race(Array.from({ length: 30 }, () => ['checkouts', body]));
    expect(statuses).toEqual({ 201: 1, 200: 29 });
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    expect([added('checkouts'), added('donations'), added('transaction_ids'), events.length]).toEqual([1, 1, 1, 1]);
  });

  test('differing: one is recorded; the same payment answers 200, every other one 409; one row, one event', async () => {
    // Rounds, because a wrong answer needs a call to fall between the winner's commit and its own next statement.
    for (let round = 0; round < 5; round += 1) {
      const body = checkoutBody({ donor: { ...donor, email: `differing-race-${round}@example.ch` } });
      const calls = Array.from({ length: 30 }, (_, index): [string, unknown] => [
        'checkouts',
        { ...body, positions: [{ amount: index % 2 === 0 ? 50 : 60 }], environment: index % 3 === 0 ? 'TEST' : 'PRODUCTION' },
      ]);
      const { answers, events, added } = await race(calls);
      const winner = answers.find((answer) => answer.status === 201)!;
      answers.forEach((answer, index) => {
        const call = calls[index][1] as { positions: [{ amount: number }]; environment: string };
        const same = call.positions[0].amount === winner.body.total_amount && call.environment === winner.body.environment;
        const expected = same ? [round, index, 200, undefined] : [round, index, 409, 'transaction_id_reused'];
        if (answer !== winner) expect([round, index, answer.status, answer.body.code]).toEqual(expected);
      });
      expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
      expect([added('checkouts'), added('transaction_ids'), events.length]).toEqual([1, 1, 1]);
    }
  });

  test('across kinds: checkouts and shop orders under one id: one is recorded, the other kind is 409', async () => {
    const transactionId = nextTransactionId();
    const checkout = checkoutBody({ donor: { ...donor, email: 'kinds-race@example.ch' }, payment: { transaction_id: transactionId, method: 'TWI' } });
    const order = { ...shopOrderBody(), payment: { transaction_id: transactionId, method: 'PAYPAL' } };
    const calls = Array.from({ length: 30 }, (_, index): [string, unknown] => (index % 2 === 0 ? ['checkouts', checkout] : ['shop-orders', order]));
    const { answers, statuses, events, added } = await race(calls);
    const winnerPath = calls[answers.findIndex((answer) => answer.status === 201)][0];
    expect(statuses).toEqual({ 201: 1, 200: 14, '409 transaction_id_in_use': 15 });
    answers.forEach((answer, index) => {
      if (answer.status === 409) expect(calls[index][0]).not.toBe(winnerPath);
    });
    expect([added('checkouts') + added('shop_orders'), added('transaction_ids'), events.length]).toEqual([1, 1, 1]);
  });

  test('follow-ups: 30 at once of one recurring donation, half with another amount: one payment, one event', async () => {
    const started = await post(
      'checkouts',
      checkoutBody({ donor: { ...donor, email: 'follow-up-race@example.ch' }, positions: [{ amount: 20, payment_type: 'recurring_init', recurring: { interval: 'monthly' } }] }),
    );
    const body = { recurring_id: started.body.donations[0].recurring_id, payment: { transaction_id: nextTransactionId() } };
    const { statuses, events, added } = await race(Array.from({ length: 30 }, (_, index) => ['recurring-payments', index % 2 ? { ...body, amount: 25 } : body]));
    expect(statuses).toEqual({ 201: 1, 200: 14, '409 transaction_id_reused': 15 });
    expect([added('checkouts'), events.length]).toEqual([1, 1]);
  });
});
