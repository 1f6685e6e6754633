import { toAmount } from '../../shared/money';
import { formatTimestamp } from '../../shared/time';
import type { VersionFeatures } from './features';

/** A contact with the aggregates that the statistics query computed for it. */
export interface ContactRow {
  id: number;
  gender: string;
  first_name: string;
  last_name: string;
  email: string;
  company: string | null;
  po_box: string | null;
  street: string;
  street_number: string;
  postal_code: string;
  city: string;
  country: string;
  language: string;
  newsletter: boolean;
  custom_fields: Record<string, string | boolean>;
  created_at: Date;
  donation_count: number | null;
  first_donation_at: Date | null;
  last_donation_at: Date | null;
  totals: Array<{ currency: string; amount_minor: number }> | null;
}

export function presentContact(row: ContactRow, features: VersionFeatures) {
  const timestamp = (instant: Date | null) => (instant ? formatTimestamp(instant, features.timestampStyle) : null);
  return {
    id: row.id,
    gender: row.gender,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    company: row.company,
    po_box: row.po_box,
    street: row.street,
    street_number: row.street_number,
    postal_code: row.postal_code,
    city: row.city,
    country: row.country,
    language: row.language,
    newsletter: row.newsletter,
    created_at: formatTimestamp(row.created_at, features.timestampStyle),
    statistics: {
      donation_count: row.donation_count ?? 0,
      first_donation_at: timestamp(row.first_donation_at),
      last_donation_at: timestamp(row.last_donation_at),
      totals: (row.totals ?? []).map(({ currency, amount_minor }) => ({ currency, amount: toAmount(amount_minor) })),
    },
    ...(features.customFields ? { custom_fields: row.custom_fields } : {}),
  };
}
