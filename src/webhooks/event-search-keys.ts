/**
 * What the admin finds an event by, read from its envelope when the event is written (the same fields migration 014
 * read from the events written before it): the payment's transaction id, the donation, checkout and order numbers
 * the event is about, and the donor's, subscriber's or customer's e-mail in lower case.
 */
export interface EventSearchKeys {
  transaction_id: string | null;
  donor_email: string | null;
  /** The `id` in `data` (donation or checkout number, order number) and the number of every position. */
  references: string[];
}

type Json = Record<string, unknown>;

const objectAt = (value: unknown, key: string): Json | undefined => {
  const child = typeof value === 'object' && value !== null ? (value as Json)[key] : undefined;
  return typeof child === 'object' && child !== null && !Array.isArray(child) ? (child as Json) : undefined;
};

const textAt = (value: Json | undefined, key: string): string | undefined =>
  typeof value?.[key] === 'string' ? (value[key] as string) : undefined;

/** An e-mail as it is searched: trimmed and in lower case (addresses are matched without regard to case). */
export const normalisedEmail = (email: string) => email.trim().toLowerCase();

export function searchKeysOf(payload: string): EventSearchKeys {
  let envelope: unknown;
  try {
    envelope = JSON.parse(payload);
  } catch {
    return { transaction_id: null, donor_email: null, references: [] };
  }
  const data = objectAt(envelope, 'data');
  const donation = objectAt(data, 'donation');
  const order = objectAt(data, 'shop_order');
  const subscription = objectAt(data, 'newsletter_subscription');
  const positions = Array.isArray(donation?.positions) ? (donation.positions as unknown[]) : [];
  const references = [textAt(donation, 'id'), textAt(order, 'id'), ...positions.map((position) => textAt(position as Json, 'id'))];
  const email = textAt(objectAt(donation, 'donor'), 'email') ?? textAt(subscription, 'email') ?? textAt(objectAt(order, 'customer'), 'email');
  return {
    transaction_id: textAt(objectAt(donation, 'payment'), 'transaction_id') ?? textAt(objectAt(order, 'payment'), 'transaction_id') ?? null,
    donor_email: email === undefined ? null : normalisedEmail(email),
    references: [...new Set(references.filter((reference): reference is string => reference !== undefined))].sort(),
  };
}
