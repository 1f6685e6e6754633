import type { TimestampStyle } from './time';

/*
 * The words the read API (src/api/versions/features.ts) and the webhook payloads (src/webhooks/payload-versions.ts)
 * use for what differs between their versions. Both have the versions v1, v2 and v2.1, and they vary by the same
 * kinds of thing, though not always in the same version (v2 payloads are already UTC; the v2 read API is not).
 */

/** The versions of the read API and of the webhook payloads alike. */
export const VERSIONS = ['v1', 'v2', 'v2.1'] as const;

export type Version = (typeof VERSIONS)[number];

/**
 * How a checkout with several positions (a multi-checkout) is counted and shaped. `per-position`: every position is
 * its own donation (its own entry, its own event) with its number, amount and campaign. `whole-checkout`: the
 * checkout is one donation with the total and its `positions`.
 */
export type CheckoutShape = 'per-position' | 'whole-checkout';

/** The flags both the read API and the payloads vary by version. */
export interface VersionFeatures {
  version: Version;
  /** How timestamps are written: Swiss local time with offset, or UTC with Z. */
  timestamps: TimestampStyle;
  /** Whether the donor's or contact's `custom_fields` are shown. */
  customFields: boolean;
  checkouts: CheckoutShape;
}
