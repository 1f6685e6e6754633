import { qrReferenceFor } from '../../src/platform/invoice-reference';
import { envelopeEnvironment, renderEnvelope } from '../../src/webhooks/envelope';
import type { WebhookEventType } from '../../src/webhooks/event-types';
import { type PayloadFeatures, payloadFeatures } from '../../src/webhooks/payload-versions';
import {
  renderDonationCompleted,
  renderDonationReconciled,
  renderRecurringCompleted,
} from '../../src/webhooks/payloads/donation';
import { renderNewsletterSubscribed, signUpEnvironment, subscriptionView } from '../../src/webhooks/payloads/newsletter';
import type { RenderedEvent } from '../../src/webhooks/payloads/rendered';
import { renderShopOrderCompleted } from '../../src/webhooks/payloads/shop-order';
import type { PaymentSnapshot, ShopOrderView } from '../../src/webhooks/payloads/views';
import { findWebhookSchema } from '../../src/webhooks/schemas/catalogue';
import { presentedDonor } from '../support/platform-donor';

const v1 = payloadFeatures('v1');
const v2 = payloadFeatures('v2');
const v21 = payloadFeatures('v2.1');

/** The errors of `data` in an envelope, against the published schema of its version and event ([] when valid). */
function schemaErrors(event: WebhookEventType, features: PayloadFeatures, data: unknown): string[] {
  const envelope = { id: 1, event, created_at: '2025-07-15T10:30:05Z', environment: 'prod', data };
  const result = findWebhookSchema(features.version, event)!.schema.safeParse(envelope);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

function expectValid(event: WebhookEventType, features: PayloadFeatures, rendered: RenderedEvent[]): void {
  for (const { data } of rendered) expect(schemaErrors(event, features, data)).toEqual([]);
}

/**
 * Exact bytes: the expected literals below are written in the order the spec lists the fields. Both the rendered
 * payloads and the expected ones (the golden payloads) validate against the version's schema.
 */
function expectExactly(
  event: WebhookEventType,
  features: PayloadFeatures,
  rendered: RenderedEvent[],
  expected: { key: string; data: unknown }[],
): void {
  expectValid(event, features, rendered);
  for (const { data } of expected) expect(schemaErrors(event, features, data)).toEqual([]);
  expect(rendered.map((event) => ({ key: event.key, json: JSON.stringify(event.data) }))).toEqual(
    expected.map((event) => ({ key: event.key, json: JSON.stringify(event.data) })),
  );
}

const water = { id: 3, title: 'Wasser für alle' };
const school = { id: 4, title: 'Schulbildung' };

const donor = presentedDonor();

// A single TWINT donation in summer (Swiss time +02:00) with answers to two custom fields.
const single: PaymentSnapshot = {
  number: '1000001',
  createdAt: new Date('2025-07-15T10:30:00.250Z'),
  currency: 'CHF',
  donor,
  customFields: { Anlass: 'Geburtstag', Spendenquittung: true },
  payment: { transactionId: 'tx-single', method: 'TWI', status: 'completed' },
  invoice: null,
  positions: [{ number: '1000001', amountMinor: 5000, campaign: water, purpose: 'Brunnenbau' }],
};

// A QR-invoice multi-checkout of two positions in winter (+01:00), without custom fields.
const multi: PaymentSnapshot = {
  number: '1000010',
  createdAt: new Date('2025-01-10T08:00:00Z'),
  currency: 'CHF',
  donor,
  customFields: {},
  payment: { transactionId: 'tx-multi', method: 'INV', status: 'pending' },
  invoice: qrReferenceFor('1000010'),
  positions: [
    { number: '1000010', amountMinor: 5000, campaign: water, purpose: 'Brunnenbau' },
    { number: '1000011', amountMinor: 2550, campaign: school, purpose: null },
  ],
};

const donorV1 = donor;
const donorWithAnswers = { ...donor, custom_fields: { Anlass: 'Geburtstag', Spendenquittung: true } };
const singlePayment = { transaction_id: 'tx-single', method: 'TWI', status: 'completed' };
const multiPayment = { transaction_id: 'tx-multi', method: 'INV', status: 'pending' };
const reference = '000000000000000000010000108';

type Campaign = { id: number; title: string } | null;
interface Position {
  id: string;
  amount: number;
  campaign: Campaign;
  purpose: string | null;
}

/** What an expected donation event says (its currency is CHF throughout); `positions` from v2.1 on. */
interface ExpectedDonation extends Position {
  created_at: string;
  donor: object;
  payment: object;
  invoice: string | null;
  positions?: Position[];
}

/** An expected donation event, its fields in the order the spec lists them. */
const donationEvent = (key: string, donation: ExpectedDonation) => ({
  key,
  data: {
    donation: {
      id: donation.id,
      created_at: donation.created_at,
      amount: donation.amount,
      currency: 'CHF',
      campaign: donation.campaign,
      purpose: donation.purpose,
      donor: donation.donor,
      payment: donation.payment,
      invoice: donation.invoice,
      ...(donation.positions && { positions: donation.positions }),
    },
  },
});

/** The single donation and the two positions of the multi-checkout, as every version shows them. */
const singlePosition: Position = { id: '1000001', amount: 50, campaign: water, purpose: 'Brunnenbau' };
const multiPositions: Position[] = [
  { id: '1000010', amount: 50, campaign: water, purpose: 'Brunnenbau' },
  { id: '1000011', amount: 25.5, campaign: school, purpose: null },
];
/** v2.1: a multi-checkout is one event with the total, no campaign or purpose of its own, and every position. */
const multiCheckout = { id: '1000010', amount: 75.5, campaign: null, purpose: null, donor, invoice: reference, positions: multiPositions };

test('the QR reference of the multi-checkout fixture is the one spelled out below', () => {
  expect(multi.invoice).toBe(reference);
});

describe('donation.completed', () => {
  test.each([
    { title: 'v1: Swiss local time, no custom fields, no positions', features: v1, key: 'donation:1000001', created_at: '2025-07-15T12:30:00+02:00', donor: donorV1 },
    { title: 'v2: UTC and the donor custom fields', features: v2, key: 'donation:1000001', created_at: '2025-07-15T10:30:00Z', donor: donorWithAnswers },
    {
      title: 'v2.1: a single donation lists itself as its only position',
      features: v21,
      key: 'checkout:1000001',
      created_at: '2025-07-15T10:30:00Z',
      donor: donorWithAnswers,
      positions: [singlePosition],
    },
  ])('$title', ({ features, key, created_at, donor, positions }) => {
    expectExactly('donation.completed', features, renderDonationCompleted(single, features), [
      donationEvent(key, { ...singlePosition, created_at, donor, payment: singlePayment, invoice: null, positions }),
    ]);
  });

  test('v1 and v2: a multi-checkout is one event per position, with the invoice of the whole payment', () => {
    for (const [features, createdAt] of [
      [v1, '2025-01-10T09:00:00+01:00'],
      [v2, '2025-01-10T08:00:00Z'],
    ] as const) {
      expectExactly(
        'donation.completed',
        features,
        renderDonationCompleted(multi, features),
        multiPositions.map((position) =>
          donationEvent(`donation:${position.id}`, { ...position, created_at: createdAt, donor, payment: multiPayment, invoice: reference }),
        ),
      );
    }
  });

  test('v2.1: a multi-checkout is one event with the total, no campaign or purpose, and every position', () => {
    expectExactly('donation.completed', v21, renderDonationCompleted(multi, v21), [
      donationEvent('checkout:1000010', { ...multiCheckout, created_at: '2025-01-10T08:00:00Z', payment: multiPayment }),
    ]);
  });
});

describe('donation.recurring_completed', () => {
  const followUp: PaymentSnapshot = {
    ...single,
    number: '1000020',
    payment: { transactionId: 'tx-follow-up', method: 'INV', status: 'pending' },
    invoice: qrReferenceFor('1000020'),
    positions: [{ number: '1000020', amountMinor: 2000, campaign: water, purpose: null }],
  };

  test('the same structure as donation.completed and never positions, on every version', () => {
    for (const [features, createdAt, donorObject] of [
      [v1, '2025-07-15T12:30:00+02:00', donorV1],
      [v2, '2025-07-15T10:30:00Z', donorWithAnswers],
      [v21, '2025-07-15T10:30:00Z', donorWithAnswers],
    ] as const) {
      expectExactly('donation.recurring_completed', features, renderRecurringCompleted(followUp, features), [
        donationEvent('checkout:1000020', {
          id: '1000020',
          created_at: createdAt,
          amount: 20,
          campaign: water,
          purpose: null,
          donor: donorObject,
          payment: { transaction_id: 'tx-follow-up', method: 'INV', status: 'pending' },
          invoice: qrReferenceFor('1000020'),
        }),
      ]);
    }
  });
});

describe('donation.reconciled', () => {
  // 73.12 paid out and 2.38 fee over positions of 50.00 and 25.50.
  const reconciliation = { paidOutMinor: 7312, feeMinor: 238, currency: 'CHF' };
  const reconciled = (paid_out_amount: number, fee_amount: number, payment = multiPayment) => ({ ...payment, paid_out_amount, fee_amount, reconciled: true });

  test('v1/v2: one event per position with its share, the shares summing exactly to the totals', () => {
    const shares = [reconciled(48.42, 1.58), reconciled(24.7, 0.8)];
    expectExactly(
      'donation.reconciled',
      v2,
      renderDonationReconciled(multi, reconciliation, v2),
      multiPositions.map((position, index) =>
        donationEvent(`donation:${position.id}`, { ...position, created_at: '2025-01-10T08:00:00Z', donor, payment: shares[index], invoice: reference }),
      ),
    );
  });

  test('v2.1: one event with positions and the sums over all positions', () => {
    expectExactly('donation.reconciled', v21, renderDonationReconciled(multi, reconciliation, v21), [
      donationEvent('checkout:1000010', { ...multiCheckout, created_at: '2025-01-10T08:00:00Z', payment: reconciled(73.12, 2.38) }),
    ]);
  });

  test('v1: Swiss local time; a single donation gets the whole amounts', () => {
    expectExactly('donation.reconciled', v1, renderDonationReconciled(single, { paidOutMinor: 4855, feeMinor: 145, currency: 'CHF' }, v1), [
      donationEvent('donation:1000001', {
        ...singlePosition,
        created_at: '2025-07-15T12:30:00+02:00',
        donor: donorV1,
        payment: reconciled(48.55, 1.45, singlePayment),
        invoice: null,
      }),
    ]);
  });

  test('shares of awkward amounts always add up to the totals', () => {
    const three: PaymentSnapshot = {
      ...multi,
      positions: [
        { number: '1', amountMinor: 3333, campaign: null, purpose: null },
        { number: '2', amountMinor: 3333, campaign: null, purpose: null },
        { number: '3', amountMinor: 3334, campaign: null, purpose: null },
      ],
    };
    for (const paidOutMinor of [1, 99, 9701, 123457]) {
      const events = renderDonationReconciled(three, { paidOutMinor, feeMinor: 299, currency: 'CHF' }, v1);
      expectValid('donation.reconciled', v1, events);
      const payments = events.map(
        (event) => (event.data.donation as { payment: { paid_out_amount: number; fee_amount: number } }).payment,
      );
      expect(payments.reduce((sum, p) => sum + Math.round(p.paid_out_amount * 100), 0)).toBe(paidOutMinor);
      expect(payments.reduce((sum, p) => sum + Math.round(p.fee_amount * 100), 0)).toBe(299);
    }
  });

  test('a fee of a few cents over many equal positions gives no position a negative share', () => {
    const six: PaymentSnapshot = {
      ...multi,
      positions: Array.from({ length: 6 }, (_, index) => ({
        number: String(1000020 + index),
        amountMinor: 5000,
        campaign: null,
        purpose: null,
      })),
    };
    const events = renderDonationReconciled(six, { paidOutMinor: 29997, feeMinor: 3, currency: 'CHF' }, v1);
    expectValid('donation.reconciled', v1, events);
    const payments = events.map(
      (event) => (event.data.donation as { payment: { paid_out_amount: number; fee_amount: number } }).payment,
    );
    expect(payments.map((p) => p.fee_amount)).toEqual([0.01, 0, 0.01, 0, 0.01, 0]);
    expect(payments.map((p) => p.paid_out_amount)).toEqual([50, 49.99, 50, 49.99, 50, 49.99]);
  });
});

describe('newsletter.subscribed', () => {
  const signUp = {
    id: 7,
    contact_id: 12,
    gender: '' as const,
    first_name: 'Beat',
    last_name: null,
    email: 'beat@example.ch',
    language: 'fr',
    // Half an hour before summer time starts: still +01:00.
    confirmed_at: new Date('2025-03-30T00:30:00Z'),
  };

  test('a linked contact supplies salutation, name, e-mail and language; v1 in Swiss local time', () => {
    const contact = { gender: 'male' as const, first_name: 'Beat', last_name: 'Keller', email: 'Beat.Keller@example.ch', language: 'de' };
    expectExactly('newsletter.subscribed', v1, renderNewsletterSubscribed(subscriptionView(signUp, contact), v1), [
      {
        key: 'newsletter_subscription:7',
        data: {
          newsletter_subscription: {
            subscription_id: 7,
            contact_id: 12,
            gender: 'male',
            first_name: 'Beat',
            last_name: 'Keller',
            email: 'Beat.Keller@example.ch',
            language: 'de',
            opt_in: true,
            opt_in_date: '2025-03-30T01:30:00+01:00',
          },
        },
      },
    ]);
  });

  test('without a contact the sign-up speaks for itself; v2 and v2.1 in UTC', () => {
    for (const features of [v2, v21]) {
      expectExactly('newsletter.subscribed', features, renderNewsletterSubscribed(subscriptionView({ ...signUp, contact_id: null }, null), features), [
        {
          key: 'newsletter_subscription:7',
          data: {
            newsletter_subscription: {
              subscription_id: 7,
              contact_id: null,
              gender: '',
              first_name: 'Beat',
              last_name: null,
              email: 'beat@example.ch',
              language: 'fr',
              opt_in: true,
              opt_in_date: '2025-03-30T00:30:00Z',
            },
          },
        },
      ]);
    }
  });
});

describe('shop_order.completed', () => {
  const address = {
    first_name: 'Anna',
    last_name: 'Muster',
    company: null,
    department: null,
    care_of: null,
    po_box: null,
    street: 'Bahnhofstrasse',
    street_number: '12',
    postal_code: '8001',
    city: 'Zürich',
    country: 'CH',
  };
  const { first_name, last_name, ...postalAddress } = address;
  const order: ShopOrderView = {
    number: '500001',
    createdAt: new Date('2025-11-02T14:05:09Z'),
    // Stored as JSON, so its keys come back in any order; the payload lists them in the spec's order.
    customer: { language: 'de', email: 'anna.muster@example.ch', gender: 'female', first_name, last_name, phone: '+41 44 123 45 67', ...postalAddress },
    invoiceAddress: address,
    deliveryAddress: { ...address, care_of: 'c/o Keller', street: 'Marktgasse', street_number: '3', postal_code: '3011', city: 'Bern' },
    items: [
      {
        articleNumber: 'KAL-2026',
        quantity: 2,
        unitPriceNetMinor: 1850,
        unitPriceGrossMinor: 1995,
        discountPercentage: 10,
        totalPriceGrossMinor: 3591,
      },
    ],
    currency: 'CHF',
    totalPriceGrossMinor: 4291,
    totalVatMinor: 289,
    totalDiscountMinor: 399,
    payment: { transactionId: 'shop-tx-1', method: 'PAYPAL', status: 'completed' },
    shipping: { method: 'A-Post', costMinor: 700 },
  };

  const expected = (createdAt: string) => ({
    key: 'shop_order:500001',
    data: {
      shop_order: {
        id: '500001',
        created_at: createdAt,
        customer: {
          gender: 'female',
          first_name: 'Anna',
          last_name: 'Muster',
          email: 'anna.muster@example.ch',
          phone: '+41 44 123 45 67',
          ...postalAddress,
          language: 'de',
        },
        invoice_address: address,
        delivery_address: {
          ...address,
          care_of: 'c/o Keller',
          street: 'Marktgasse',
          street_number: '3',
          postal_code: '3011',
          city: 'Bern',
        },
        items: [
          {
            article_number: 'KAL-2026',
            quantity: 2,
            unit_price_net: 18.5,
            unit_price_gross: 19.95,
            discount_percentage: 10,
            total_price_gross: 35.91,
          },
        ],
        currency: 'CHF',
        total_price_gross: 42.91,
        total_vat: 2.89,
        total_discount: 3.99,
        payment: { transaction_id: 'shop-tx-1', method: 'PAYPAL', status: 'completed' },
        shipping: { method: 'A-Post', cost: 7 },
      },
    },
  });

  test('v1 in Swiss local time, v2 and v2.1 in UTC, the same fields otherwise', () => {
    expectExactly('shop_order.completed', v1, renderShopOrderCompleted(order, v1), [expected('2025-11-02T15:05:09+01:00')]);
    expectExactly('shop_order.completed', v2, renderShopOrderCompleted(order, v2), [expected('2025-11-02T14:05:09Z')]);
    expectExactly('shop_order.completed', v21, renderShopOrderCompleted(order, v21), [expected('2025-11-02T14:05:09Z')]);
  });
});

describe('envelope', () => {
  test('id, event, created_at in UTC with Z, environment and data, in that order; with the facts stored beside it', () => {
    const [rendered] = renderDonationCompleted(single, v21);
    const payload = renderEnvelope({ id: 42, event: 'donation.completed', createdAt: new Date('2025-07-15T10:30:05.123Z'), environment: 'test', rendered });
    expect(payload.text).toBe(
      `{"id":42,"event":"donation.completed","created_at":"2025-07-15T10:30:05Z","environment":"test","data":${JSON.stringify(rendered.data)}}`,
    );
    expect(payload).toEqual({ text: payload.text, environment: 'test', searchKeys: rendered.searchKeys });
  });

  test('TEST is test; PRODUCTION is prod, or stage on a staging platform', () => {
    expect(envelopeEnvironment('TEST', false)).toBe('test');
    expect(envelopeEnvironment('TEST', true)).toBe('test');
    expect(envelopeEnvironment('PRODUCTION', false)).toBe('prod');
    expect(envelopeEnvironment('PRODUCTION', true)).toBe('stage');
  });

  test("a sign-up is in its contact's environment, and in PRODUCTION without one", () => {
    expect(signUpEnvironment({ environment: 'TEST' })).toBe('TEST');
    expect(signUpEnvironment({ environment: 'PRODUCTION' })).toBe('PRODUCTION');
    expect(signUpEnvironment(null)).toBe('PRODUCTION');
  });
});
