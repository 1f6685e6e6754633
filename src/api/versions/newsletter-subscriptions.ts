import type { Gender } from '../../shared/donor-fields';
import { type LinkedContact, newsletterSubscriptionObject, type SignUpFields, subscriptionView } from '../../webhooks/payloads/newsletter';
import type { VersionFeatures } from './features';

/** A confirmed sign-up with the fields of its linked contact (all null when there is none). */
export interface NewsletterSubscriptionRow extends SignUpFields {
  contact_gender: Gender | null;
  contact_first_name: string | null;
  contact_last_name: string | null;
  contact_email: string | null;
  contact_language: string | null;
}

/** The webhook's `newsletter_subscription` object, with the same rule for contact versus sign-up fields. */
export function presentNewsletterSubscription(row: NewsletterSubscriptionRow, features: VersionFeatures) {
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
  return newsletterSubscriptionObject(subscriptionView(row, contact), features.timestampStyle);
}
