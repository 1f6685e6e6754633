import { formatTimestamp } from '../../shared/time';
import type { VersionFeatures } from './features';

/** A confirmed sign-up, its person fields already taken from the linked contact where it has them. */
export interface NewsletterSubscriptionRow {
  id: number;
  contact_id: number | null;
  gender: string;
  first_name: string | null;
  last_name: string | null;
  email: string;
  language: string;
  confirmed_at: Date;
}

/** The webhook's `newsletter_subscription` object, on the API. */
export function presentNewsletterSubscription(row: NewsletterSubscriptionRow, features: VersionFeatures) {
  return {
    subscription_id: row.id,
    contact_id: row.contact_id,
    gender: row.gender,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    language: row.language,
    opt_in: true as const,
    opt_in_date: formatTimestamp(row.confirmed_at, features.timestampStyle),
  };
}
