import { notFound } from '../shared/errors';
import { renderNewsletterSubscribed, signUpEnvironment, subscriptionView } from '../webhooks/payloads/newsletter';
import { recordCommandEvents } from './command-events';
import { type ContactRow, recordNewsletterConsent } from './contact-store';
import type { PlatformCommand } from './context';
import { findSignUpForUpdate, markSignUpConfirmed } from './newsletter-store';
import { presentSignUp, type SignUpRecord } from './newsletter-subscriptions';

/**
 * The click on the link in the confirmation mail. The first confirmation sets the opt-in date, marks a linked
 * contact as consenting, and fires newsletter.subscribed; any later click changes nothing and fires nothing.
 */
export const confirmNewsletterSubscription: PlatformCommand<number, SignUpRecord> = async (trx, subscriptionId, ctx) => {
  // Locked so that two simultaneous clicks cannot both see an unconfirmed sign-up.
  const signUp = await findSignUpForUpdate(trx, subscriptionId);
  if (!signUp) throw notFound(`Newsletter subscription ${subscriptionId} not found`, 'subscription_not_found');
  if (signUp.confirmed_at) return { created: false, record: presentSignUp(signUp) };

  const now = ctx.now();
  const confirmed = await markSignUpConfirmed(trx, subscriptionId, now);
  // The confirmed opt-in is the contact's newsletter consent.
  const contact: ContactRow | null = confirmed.contact_id ? await recordNewsletterConsent(trx, confirmed.contact_id, now) : null;
  const view = subscriptionView({ ...confirmed, confirmed_at: now }, contact);
  await recordCommandEvents(trx, ctx, {
    type: 'newsletter.subscribed',
    environment: signUpEnvironment(contact),
    occurredAt: now,
    render: (features) => renderNewsletterSubscribed(view, features),
  });
  return { created: true, record: presentSignUp(confirmed) };
};
