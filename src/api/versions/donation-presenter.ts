import { DONOR_FIELDS, type Donor } from '../../shared/donor-fields';
import { toAmount } from '../../shared/money';
import { formatTimestamp } from '../../shared/time';
import type { DonationRow } from '../../donations/payment-store';
import type { VersionFeatures } from './features';

/*
 * Donation serializers. Each lists its output fields explicitly; the version's feature set decides which of the
 * later fields (custom_fields, checkout, positions) are added and how a multi-checkout is shaped.
 */

const campaignOf = (row: DonationRow) =>
  row.campaign_id === null ? null : { id: row.campaign_id, title: row.campaign_title as string };

const donorOf = (row: DonationRow): Donor =>
  Object.fromEntries(DONOR_FIELDS.map((field) => [field, row[`donor_${field}`]])) as Donor;

const paymentOf = (row: DonationRow) => ({
  transaction_id: row.transaction_id,
  method: row.payment_method,
  status: row.payment_status,
});

const recurringOf = (row: DonationRow) =>
  row.recurring_id === null ? null : { id: row.recurring_id, interval: row.recurring_interval! };

const customFieldsOf = (row: DonationRow, features: VersionFeatures) =>
  features.customFields ? { custom_fields: row.custom_fields } : {};

/** One position as its own donation: every entry of the donations list, and contact donations before v2.1. */
export function presentDonationEntry(row: DonationRow, features: VersionFeatures) {
  return {
    id: row.number,
    created_at: formatTimestamp(row.created_at, features.timestamps),
    environment: row.environment,
    payment_type: row.payment_type,
    amount: toAmount(row.amount_minor),
    currency: row.currency,
    campaign: campaignOf(row),
    purpose: row.purpose,
    contact_id: row.contact_id,
    donor: donorOf(row),
    payment: paymentOf(row),
    invoice: row.invoice_reference,
    recurring: recurringOf(row),
    ...customFieldsOf(row, features),
    ...(features.checkoutOnDonationEntries
      ? {
          checkout: {
            number: row.checkout_number,
            total_amount: toAmount(row.checkout_total_minor),
            currency: row.currency,
          },
        }
      : {}),
  };
}

/**
 * One checkout with its positions (v2.1 contact donations): the total, campaign and purpose only when single, and
 * everything else from the first position (a multi-checkout cannot hold a recurring donation).
 */
function presentCheckoutEntry(positions: readonly DonationRow[], features: VersionFeatures) {
  const [first] = positions;
  const single = positions.length === 1;
  return {
    id: first.checkout_number,
    created_at: formatTimestamp(first.created_at, features.timestamps),
    environment: first.environment,
    payment_type: first.payment_type,
    amount: toAmount(first.checkout_total_minor),
    currency: first.currency,
    campaign: single ? campaignOf(first) : null,
    purpose: single ? first.purpose : null,
    contact_id: first.contact_id,
    donor: donorOf(first),
    payment: paymentOf(first),
    invoice: first.invoice_reference,
    recurring: recurringOf(first),
    ...customFieldsOf(first, features),
    positions: positions.map((row) => ({
      id: row.number,
      amount: toAmount(row.amount_minor),
      campaign: campaignOf(row),
      purpose: row.purpose,
      payment_method: row.payment_method,
    })),
  };
}

/** Rows ordered by checkout, grouped into one list per checkout. */
function groupByCheckout(rows: readonly DonationRow[]): DonationRow[][] {
  const groups: DonationRow[][] = [];
  for (const row of rows) {
    const current = groups.at(-1);
    if (current && current[0].checkout_id === row.checkout_id) current.push(row);
    else groups.push([row]);
  }
  return groups;
}

/** The entries of one contact's donations in the version's unit (position or checkout). */
export function presentContactDonations(rows: readonly DonationRow[], features: VersionFeatures) {
  return features.checkouts === 'whole-checkout'
    ? groupByCheckout(rows).map((positions) => presentCheckoutEntry(positions, features))
    : rows.map((row) => presentDonationEntry(row, features));
}
