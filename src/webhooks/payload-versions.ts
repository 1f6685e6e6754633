import { type Version, type VersionFeatures, VERSIONS } from '../shared/version-features';

export const PAYLOAD_VERSIONS = VERSIONS;

/** An endpoint's payload version: the envelope and data its events are rendered in. */
export type PayloadVersion = Version;

/**
 * Everything that differs between webhook payload versions; the renderers read this and nothing else. `timestamps`:
 * `created_at` and `opt_in_date` inside `data` (the envelope's `created_at` is always UTC). `customFields`:
 * `donor.custom_fields`, sent only when the donation has answers. `checkouts`: `whole-checkout` is one event per
 * payment with `positions` (donation.completed and donation.reconciled), `per-position` one event per position.
 */
export type PayloadFeatures = VersionFeatures;

const FEATURES: Record<PayloadVersion, PayloadFeatures> = {
  v1: { version: 'v1', timestamps: 'swiss-local', customFields: false, checkouts: 'per-position' },
  v2: { version: 'v2', timestamps: 'utc', customFields: true, checkouts: 'per-position' },
  'v2.1': { version: 'v2.1', timestamps: 'utc', customFields: true, checkouts: 'whole-checkout' },
};

export function payloadFeatures(version: PayloadVersion): PayloadFeatures {
  return FEATURES[version];
}

/** v2.1 sends multi-checkouts as one event, which only makes sense when the shop has a cart. */
export function versionNeedsCartLogic(version: PayloadVersion): boolean {
  return FEATURES[version].checkouts === 'whole-checkout';
}
