import type { Knex } from 'knex';
import { type ContactRow, replaceCustomFields } from '../contacts/contact-store';
import { MAX_CUSTOM_FIELDS } from './input-schemas';
import { latestCustomFieldAnswers } from '../donations/payment-store';

/**
 * A contact's custom field answers are merged from its donations, newer answers replacing older ones; a donor who
 * answered many forms (or a form that asks new field names each time) would grow them without limit. The contact
 * keeps the latest answer to each of its most recently answered field names, at most as many as one form may ask:
 * the answers of its latest donation always, older ones as far as room is left. Each checkout keeps all its own.
 */
const CONTACT_CUSTOM_FIELDS_CAP = MAX_CUSTOM_FIELDS;

/**
 * Caps the contact's merged answers, once the checkout that merged them is written (it is the most recent). Under
 * the cap the merge is the rule already: every name, with its latest answer.
 */
export async function capContactCustomFields(trx: Knex.Transaction, contact: ContactRow): Promise<void> {
  if (Object.keys(contact.custom_fields).length <= CONTACT_CUSTOM_FIELDS_CAP) return;
  await replaceCustomFields(trx, contact.id, await latestCustomFieldAnswers(trx, contact.id, CONTACT_CUSTOM_FIELDS_CAP));
}
