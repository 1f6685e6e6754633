import type { ConfirmedSignUpRow } from '../../newsletter/newsletter-store';
import { type LinkedContact, newsletterSubscriptionObject, subscriptionView } from '../../webhooks/payloads/newsletter';
import type { VersionFeatures } from './features';

/** The webhook's `newsletter_subscription` object, with the same rule for contact versus sign-up fields. */
export function presentNewsletterSubscription(row: ConfirmedSignUpRow, features: VersionFeatures) {
  const contact: LinkedContact | null =
    row.contact_email === null
      ? null
      : {
          gender: row.contact_gender!,
          first_name: row.contact_first_name!,
          last_name: row.contact_last_name!,
          email: row.contact_email,
          language: row.contact_language!,
        };
  return newsletterSubscriptionObject(subscriptionView(row, contact), features.timestamps);
}
