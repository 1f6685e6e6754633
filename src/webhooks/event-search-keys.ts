/**
 * What the admin finds an event by, stored with it (migration 014): the payment's transaction id, the donor's,
 * subscriber's or customer's e-mail in lower case, and the donation, checkout and order numbers the event is about.
 * The renderers give them with the data they render (src/webhooks/payloads/), so nothing reads them back from the
 * payload.
 */
export interface EventSearchKeys {
  transactionId: string | null;
  /** Trimmed and in lower case. */
  email: string | null;
  /** The `id` in `data` (donation or checkout number, order number) and the number of every position; once each, sorted. */
  references: string[];
}

/** An e-mail as it is searched: trimmed and in lower case (addresses are matched without regard to case). */
export const normalisedEmail = (email: string) => email.trim().toLowerCase();

/** The keys of an event from the values its data carries. */
export function searchKeys({ transactionId, email, references }: { transactionId: string | null; email: string | null; references: string[] }): EventSearchKeys {
  return {
    transactionId,
    email: email === null ? null : normalisedEmail(email),
    references: [...new Set(references)].sort(),
  };
}
