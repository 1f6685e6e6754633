import { searchKeysOf } from '../../src/webhooks/event-search-keys';

const envelope = (data: unknown) => JSON.stringify({ id: 1, event: 'x', created_at: '2025-07-15T10:30:00Z', environment: 'prod', data });

test('a v2.1 checkout is found by its transaction id, its number and every position, and by the donor e-mail in lower case', () => {
  const data = {
    donation: {
      id: '1000010',
      donor: { email: 'Anna.Mueller@Example.CH ' },
      payment: { transaction_id: 'pi_3Q7', method: 'VIS', status: 'completed' },
      positions: [{ id: '1000010' }, { id: '1000011' }],
    },
  };
  expect(searchKeysOf(envelope(data))).toEqual({
    transaction_id: 'pi_3Q7',
    references: ['1000010', '1000011'],
    donor_email: 'anna.mueller@example.ch',
  });
});

test('a shop order by its number, transaction and customer; a sign-up by its e-mail', () => {
  expect(searchKeysOf(envelope({ shop_order: { id: 'S-77', customer: { email: 'kim@example.org' }, payment: { transaction_id: 'tx-shop' } } }))).toEqual({
    transaction_id: 'tx-shop',
    references: ['S-77'],
    donor_email: 'kim@example.org',
  });
  expect(searchKeysOf(envelope({ newsletter_subscription: { subscription_id: 5, email: 'Luca@Example.org' } }))).toEqual({
    transaction_id: null,
    references: [],
    donor_email: 'luca@example.org',
  });
});

test('a payload that is not JSON, or of another shape, has no keys and does not throw', () => {
  for (const payload of ['', 'not json', 'null', '[]', '{"data": 5}', envelope({ donation: { id: 7, positions: 'x', donor: null } })]) {
    expect(searchKeysOf(payload)).toEqual({ transaction_id: null, references: [], donor_email: null });
  }
});
