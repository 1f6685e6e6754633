import type { Version, VersionFeatures as SharedVersionFeatures } from '../../shared/version-features';

export type ApiVersion = Version;

/**
 * Everything that differs between API versions, in one place, in the words the payload versions use too
 * (src/shared/version-features.ts). Serializers and response schemas read these flags; nothing else in the code asks
 * which version it is serving. `timestamps`: v1 and v2 Swiss local time with offset, v2.1 UTC with Z.
 * `customFields` (v2 on): `custom_fields` on donation entries and contacts. `checkouts`: what counts as one donation
 * of a contact, and how the contact's donations list a multi-checkout.
 */
export interface VersionFeatures extends SharedVersionFeatures {
  /** Prefix of the OpenAPI component names of this version's response schemas. */
  schemaPrefix: string;
  /** v2.1: `checkout` (number, total, currency) on every entry of the donations list. */
  checkoutOnDonationEntries: boolean;
}

export const VERSION_FEATURES: Readonly<Record<ApiVersion, VersionFeatures>> = {
  v1: {
    version: 'v1',
    schemaPrefix: 'V1',
    timestamps: 'swiss-local',
    customFields: false,
    checkoutOnDonationEntries: false,
    checkouts: 'per-position',
  },
  v2: {
    version: 'v2',
    schemaPrefix: 'V2',
    timestamps: 'swiss-local',
    customFields: true,
    checkoutOnDonationEntries: false,
    checkouts: 'per-position',
  },
  'v2.1': {
    version: 'v2.1',
    schemaPrefix: 'V2_1',
    timestamps: 'utc',
    customFields: true,
    checkoutOnDonationEntries: true,
    checkouts: 'whole-checkout',
  },
};

export interface ApiRoot {
  prefix: string;
  version: ApiVersion;
  /** Set on a root that repeats another one under a second path. */
  aliasOf?: string;
}

/** Every path root of the read API; `/crm-api` answers exactly as v1 does. */
export const API_ROOTS: readonly ApiRoot[] = [
  { prefix: '/api/v1', version: 'v1' },
  { prefix: '/api/v2', version: 'v2' },
  { prefix: '/api/v2.1', version: 'v2.1' },
  { prefix: '/crm-api', version: 'v1', aliasOf: '/api/v1' },
];
