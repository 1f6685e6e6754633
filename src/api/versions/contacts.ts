import { type Donor, pickDonor } from '../../shared/donor-fields';
import { toAmount } from '../../shared/money';
import { formatTimestamp } from '../../shared/time';
import type { VersionFeatures } from './features';

/** A contact with the aggregates that the statistics query computed for it. */
export interface ContactRow extends Donor {
  id: number;
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
    ...pickDonor(row),
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
