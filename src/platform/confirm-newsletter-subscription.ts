import type { Knex } from 'knex';
import { notFound } from '../shared/errors';
import { renderNewsletterSubscribed, signUpEnvironment, subscriptionView, UNLINKED_SIGN_UP_ENVIRONMENT } from '../webhooks/payloads/newsletter';
import { recordCommandEvents } from './command-events';
import { type ContactRow, recordNewsletterConsent } from '../contacts/contact-store';
import type { PlatformCommand } from './context';
import { findSignUpForUpdate, markSignUpConfirmed, type SignUpRow } from '../newsletter/newsletter-store';
import { presentSignUp, type SignUpRecord } from './present-sign-up';

/**
 * Consent belongs to the address that confirmed: the sign-up's contact if it still has the sign-up's e-mail address,
 * otherwise the live contact that has it (one may have been created since the sign-up), otherwise none. A contact
 * with another address is never marked consenting, nor named in the event.
 */
async function consentingContact(trx: Knex.Transaction, signUp: SignUpRow, now: Date): Promise<ContactRow | null> {
  if (signUp.contact_id !== null) {
    const linked = await recordNewsletterConsent(trx, { id: signUp.contact_id }, signUp.email, now);
    if (linked) return linked;
  }
  return (await recordNewsletterConsent(trx, { environment: UNLINKED_SIGN_UP_ENVIRONMENT }, signUp.email, now)) ?? null;
}

/**
 * The click on the link in the confirmation mail. The first confirmation sets the opt-in date, marks the contact of
 * the confirmed address as consenting, and fires newsletter.subscribed; any later click changes nothing and fires
 * nothing.
 */
export const confirmNewsletterSubscription: PlatformCommand<number, SignUpRecord> = async (trx, subscriptionId, ctx) => {
  // Locked so that two simultaneous clicks cannot both see an unconfirmed sign-up.
  const signUp = await findSignUpForUpdate(trx, subscriptionId);
  if (!signUp) throw notFound(`Newsletter subscription ${subscriptionId} not found`, 'subscription_not_found');
  if (signUp.confirmed_at) return { created: false, record: presentSignUp(signUp) };

  const now = ctx.now();
  const contact = await consentingContact(trx, signUp, now);
  // The sign-up is linked to the contact whose consent it is, and to no other.
  const confirmed = await markSignUpConfirmed(trx, subscriptionId, now, contact?.id ?? null);
  const view = subscriptionView({ ...confirmed, confirmed_at: now }, contact);
  await recordCommandEvents(trx, ctx, {
    type: 'newsletter.subscribed',
    environment: signUpEnvironment(contact),
    occurredAt: now,
    render: (features) => renderNewsletterSubscribed(view, features),
  });
  return { created: true, record: presentSignUp(confirmed) };
};
