import { toAmount } from '../../shared/money';
import { formatTimestamp } from '../../shared/time';
import type { DonationRow } from '../crm/donation-rows';
import type { VersionFeatures } from './features';

/*
 * Donation serializers. Each lists its output fields explicitly; the version's feature set decides which of the
 * later fields (custom_fields, checkout, positions) are added and how a multi-checkout is shaped.
 */

const campaignOf = (row: DonationRow) =>
  row.campaign_id === null ? null : { id: row.campaign_id, title: row.campaign_title as string };

const donorOf = (row: DonationRow) => ({
  gender: row.donor_gender,
  first_name: row.donor_first_name,
  last_name: row.donor_last_name,
  email: row.donor_email,
  company: row.donor_company,
  po_box: row.donor_po_box,
  street: row.donor_street,
  street_number: row.donor_street_number,
  postal_code: row.donor_postal_code,
  city: row.donor_city,
  country: row.donor_country,
  language: row.donor_language,
  newsletter: row.donor_newsletter,
});

/** Fields shared by a position entry and a checkout entry; amount, campaign and purpose are the caller's. */
const commonFields = (row: DonationRow, features: VersionFeatures) => ({
  created_at: formatTimestamp(row.created_at, features.timestampStyle),
  environment: row.environment,
  payment_type: row.payment_type,
  currency: row.currency,
  contact_id: row.contact_id,
  donor: donorOf(row),
  payment: { transaction_id: row.transaction_id, method: row.payment_method, status: row.payment_status },
  invoice: row.invoice_reference,
  recurring: row.recurring_id === null ? null : { id: row.recurring_id, interval: row.recurring_interval! },
  ...(features.customFields ? { custom_fields: row.custom_fields } : {}),
});

/** One position as its own donation: every entry of the donations list, and contact donations before v2.1. */
export function presentDonationEntry(row: DonationRow, features: VersionFeatures) {
  return {
    id: row.number,
    ...commonFields(row, features),
    amount: toAmount(row.amount_minor),
    campaign: campaignOf(row),
    purpose: row.purpose,
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

/** One checkout with its positions (v2.1 contact donations): the total, and campaign and purpose only when single. */
export function presentCheckoutEntry(positions: readonly DonationRow[], features: VersionFeatures) {
  const [first] = positions;
  const single = positions.length === 1;
  return {
    id: first.checkout_number,
    ...commonFields(first, features),
    amount: toAmount(first.checkout_total_minor),
    campaign: single ? campaignOf(first) : null,
    purpose: single ? first.purpose : null,
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
export function groupByCheckout(rows: readonly DonationRow[]): DonationRow[][] {
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
  return features.contactDonationUnit === 'checkout'
    ? groupByCheckout(rows).map((positions) => presentCheckoutEntry(positions, features))
    : rows.map((row) => presentDonationEntry(row, features));
}
