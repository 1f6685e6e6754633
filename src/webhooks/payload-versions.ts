import type { TimestampStyle } from '../shared/time';

export const PAYLOAD_VERSIONS = ['v1', 'v2', 'v2.1'] as const;

export type PayloadVersion = (typeof PAYLOAD_VERSIONS)[number];

/** Everything that differs between webhook payload versions; the renderers read this and nothing else. */
export interface PayloadFeatures {
  version: PayloadVersion;
  /** How `created_at` and `opt_in_date` inside `data` are written (the envelope's `created_at` is always UTC). */
  timestamps: TimestampStyle;
  /** Whether `donor.custom_fields` is sent (and then only when the donation has answers). */
  customFields: boolean;
  /**
   * `whole-checkout`: one event per payment with `positions` (donation.completed and donation.reconciled);
   * `per-position`: one event per position, each carrying that position's number, amount and campaign.
   */
  checkoutShape: 'whole-checkout' | 'per-position';
}

const FEATURES: Record<PayloadVersion, PayloadFeatures> = {
  v1: { version: 'v1', timestamps: 'swiss-local', customFields: false, checkoutShape: 'per-position' },
  v2: { version: 'v2', timestamps: 'utc', customFields: true, checkoutShape: 'per-position' },
  'v2.1': { version: 'v2.1', timestamps: 'utc', customFields: true, checkoutShape: 'whole-checkout' },
};

export function payloadFeatures(version: PayloadVersion): PayloadFeatures {
  return FEATURES[version];
}

/** v2.1 sends multi-checkouts as one event, which only makes sense when the shop has a cart. */
export function versionNeedsCartLogic(version: PayloadVersion): boolean {
  return FEATURES[version].checkoutShape === 'whole-checkout';
}
