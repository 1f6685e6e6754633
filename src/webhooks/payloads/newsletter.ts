import type { Environment } from '../../shared/environment';
import type { Gender } from '../../shared/donor-fields';
import { formatTimestamp, type TimestampStyle } from '../../shared/time';
import { searchKeys } from '../event-search-keys';
import type { PayloadFeatures } from '../payload-versions';
import type { NewsletterData, NewsletterSubscriptionObject } from '../schemas/payload-schemas';
import type { RenderedEvent } from './rendered';
import type { NewsletterSubscriptionView } from './views';

/**
 * Sign-ups belong to the platform, not to a payment: one without a contact is in the platform's live environment
 * (envelope `prod`, or `stage` on a staging platform).
 */
export const UNLINKED_SIGN_UP_ENVIRONMENT: Environment = 'PRODUCTION';

/**
 * The one environment rule for newsletter sign-ups, for the read API's `environment` filter and the envelope alike:
 * a sign-up linked to a contact is in that contact's environment (a TEST contact's sign-up is test data, like the
 * contact's donations); one without a contact is in PRODUCTION. The read API applies it in SQL with the same constant.
 */
export function signUpEnvironment(contact: { environment: Environment } | null): Environment {
  return contact?.environment ?? UNLINKED_SIGN_UP_ENVIRONMENT;
}

export interface SignUpFields {
  id: number;
  contact_id: number | null;
  gender: Gender | '';
  first_name: string | null;
  last_name: string | null;
  email: string;
  language: string;
  confirmed_at: Date;
}

export interface LinkedContact {
  gender: Gender | '';
  first_name: string;
  last_name: string;
  email: string;
  language: string;
}

/**
 * A sign-up linked to a contact shows the contact's salutation, name, e-mail and language; whatever the contact
 * lacks (empty) comes from the sign-up.
 */
export function subscriptionView(signUp: SignUpFields, contact: LinkedContact | null): NewsletterSubscriptionView {
  return {
    id: signUp.id,
    contactId: signUp.contact_id,
    gender: contact?.gender || signUp.gender,
    firstName: contact?.first_name || signUp.first_name,
    lastName: contact?.last_name || signUp.last_name,
    email: contact?.email || signUp.email,
    language: contact?.language || signUp.language,
    confirmedAt: signUp.confirmed_at,
  };
}

/** The `newsletter_subscription` object, also what the CRM API lists (with its own timestamp style). */
export function newsletterSubscriptionObject(
  view: NewsletterSubscriptionView,
  timestamps: TimestampStyle,
): NewsletterSubscriptionObject {
  return {
    subscription_id: view.id,
    contact_id: view.contactId,
    gender: view.gender,
    first_name: view.firstName,
    last_name: view.lastName,
    email: view.email,
    language: view.language,
    opt_in: true,
    opt_in_date: formatTimestamp(view.confirmedAt, timestamps),
  };
}

export function renderNewsletterSubscribed(
  view: NewsletterSubscriptionView,
  features: PayloadFeatures,
): RenderedEvent<NewsletterData>[] {
  const subscription = newsletterSubscriptionObject(view, features.timestamps);
  return [
    {
      key: `newsletter_subscription:${view.id}`,
      data: { newsletter_subscription: subscription },
      // Found by the e-mail it shows; a sign-up has no payment, and its number is not a donation or order number.
      searchKeys: searchKeys({ transactionId: null, email: subscription.email, references: [] }),
    },
  ];
}
