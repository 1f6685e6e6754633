import { pickDonor } from '../../shared/donor-fields';
import { toAmount } from '../../shared/money';
import { formatTimestamp } from '../../shared/time';
import type { ContactWithStatistics } from '../../contacts/contact-store';
import type { VersionFeatures } from './features';

export function presentContact(row: ContactWithStatistics, features: VersionFeatures) {
  const timestamp = (instant: Date | null) => (instant ? formatTimestamp(instant, features.timestamps) : null);
  return {
    id: row.id,
    ...pickDonor(row),
    created_at: formatTimestamp(row.created_at, features.timestamps),
    statistics: {
      donation_count: row.donation_count ?? 0,
      first_donation_at: timestamp(row.first_donation_at),
      last_donation_at: timestamp(row.last_donation_at),
      totals: (row.totals ?? []).map(({ currency, amount_minor }) => ({ currency, amount: toAmount(amount_minor) })),
    },
    ...(features.customFields ? { custom_fields: row.custom_fields } : {}),
  };
}
