import { searchKeys } from '../../src/webhooks/event-search-keys';
import { payloadFeatures } from '../../src/webhooks/payload-versions';
import { renderDonationCompleted, renderDonationReconciled } from '../../src/webhooks/payloads/donation';
import { renderNewsletterSubscribed } from '../../src/webhooks/payloads/newsletter';
import type { PaymentSnapshot } from '../../src/webhooks/payloads/views';
import { presentedDonor } from '../support/platform-donor';

// The keys an event is found by come from its renderer, taken from the data it renders. That they equal what the
// stored payload holds, for every event type on every version, is checked end to end in
// test/webhook-events/event-facts.test.ts; here, what they are.

const checkout: PaymentSnapshot = {
  number: '1000010',
  createdAt: new Date('2025-01-10T08:00:00Z'),
  currency: 'CHF',
  donor: { ...presentedDonor(), email: ' Anna.Mueller@Example.CH ' },
  customFields: {},
  payment: { transactionId: 'pi_3Q7', method: 'VIS', status: 'completed' },
  invoice: null,
  positions: [
    { number: '1000011', amountMinor: 5000, campaign: null, purpose: null },
    { number: '1000010', amountMinor: 2550, campaign: null, purpose: null },
  ],
};

test('an e-mail is searched trimmed and in lower case; each number once, sorted', () => {
  expect(searchKeys({ transactionId: 'tx', email: ' Kim@Example.ORG', references: ['S-2', 'S-1', 'S-2'] })).toEqual({
    transactionId: 'tx',
    email: 'kim@example.org',
    references: ['S-1', 'S-2'],
  });
  expect(searchKeys({ transactionId: null, email: null, references: [] })).toEqual({ transactionId: null, email: null, references: [] });
});

test('a v2.1 checkout is found by its transaction id, its number and every position, and by the donor e-mail', () => {
  const [event] = renderDonationCompleted(checkout, payloadFeatures('v2.1'));
  expect(event.searchKeys).toEqual({ transactionId: 'pi_3Q7', email: 'anna.mueller@example.ch', references: ['1000010', '1000011'] });
});

test('on v1 and v2 each position is its own event, found by its own number and the shared transaction', () => {
  const perPosition = [
    { transactionId: 'pi_3Q7', email: 'anna.mueller@example.ch', references: ['1000011'] },
    { transactionId: 'pi_3Q7', email: 'anna.mueller@example.ch', references: ['1000010'] },
  ];
  const reconciliation = { paidOutMinor: 7000, feeMinor: 550, currency: 'CHF' };
  expect(renderDonationCompleted(checkout, payloadFeatures('v1')).map((event) => event.searchKeys)).toEqual(perPosition);
  expect(renderDonationReconciled(checkout, reconciliation, payloadFeatures('v2')).map((event) => event.searchKeys)).toEqual(perPosition);
});

test('a sign-up by its e-mail only: it has no payment, and its number is no donation or order number', () => {
  const view = { id: 5, contactId: null, gender: '' as const, firstName: null, lastName: null, email: 'Luca@Example.org', language: 'de', confirmedAt: new Date() };
  expect(renderNewsletterSubscribed(view, payloadFeatures('v2')).map((event) => event.searchKeys)).toEqual([
    { transactionId: null, email: 'luca@example.org', references: [] },
  ]);
});
