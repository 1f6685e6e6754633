import type { Knex } from 'knex';
import { z } from 'zod';
import { ApiError, badRequest } from '../shared/errors';
import { UNLINKED_SIGN_UP_ENVIRONMENT } from '../webhooks/payloads/newsletter';
import { addressOfContact, findContactIdByEmail } from '../contacts/contact-store';
import type { PlatformCommand } from './context';
import { emailInput, genderInput, languageInput, optionalText, rowIdInput } from './input-schemas';
import { findFirstSignUpOf, insertSignUp, lockSignUpsOf } from '../newsletter/newsletter-store';
import { presentSignUp, type SignUpRecord } from './present-sign-up';

export const signUpInput = z.object({
  email: emailInput,
  gender: z.union([genderInput, z.literal('')]).default(''),
  first_name: optionalText(100),
  last_name: optionalText(100),
  language: languageInput,
  channel: z.enum(['donation_form', 'form', 'api']).default('api'),
  /** The contact this sign-up belongs to (it must have the sign-up's e-mail); without it the live contact with the e-mail, if any. */
  contact_id: rowIdInput.optional(),
});

export type SignUpInput = z.output<typeof signUpInput>;

/**
 * The contact the sign-up belongs to: the one named, which must have the sign-up's address (consent belongs to the
 * address that confirms; naming another person's contact is a 409), or the live contact with that address.
 */
async function contactToLink(trx: Knex.Transaction, input: SignUpInput): Promise<number | null> {
  if (input.contact_id !== undefined) {
    const address = await addressOfContact(trx, input.contact_id, input.email);
    if (address === undefined) throw badRequest(`contact_id: contact ${input.contact_id} does not exist`, 'unknown_contact');
    if (address === 'other') {
      throw new ApiError('contact_email_mismatch', `contact_id: contact ${input.contact_id} has another e-mail address than ${input.email}`);
    }
    return input.contact_id;
  }
  // Sign-ups belong to the platform, not to a payment environment: only live contacts are linked automatically.
  return (await findContactIdByEmail(trx, UNLINKED_SIGN_UP_ENVIRONMENT, input.email)) ?? null;
}

/**
 * A newsletter sign-up, not yet confirmed (double opt-in: the confirmation fires the event). Idempotent on the
 * e-mail address: a second sign-up of the same address returns the first, confirmed or not.
 */
export const signUpForNewsletter: PlatformCommand<SignUpInput, SignUpRecord> = async (trx, input, ctx) => {
  await lockSignUpsOf(trx, input.email);
  // Checked before the repeat is answered: a contact of another address is refused however often it is named.
  const contactId = await contactToLink(trx, input);
  const existing = await findFirstSignUpOf(trx, input.email);
  if (existing) return { created: false, record: presentSignUp(existing) };

  const row = await insertSignUp(trx, {
    contact_id: contactId,
    gender: input.gender,
    first_name: input.first_name,
    last_name: input.last_name,
    email: input.email,
    language: input.language,
    channel: input.channel,
    created_at: ctx.now(),
  });
  return { created: true, record: presentSignUp(row) };
};
