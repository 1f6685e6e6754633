import type { TimestampStyle } from '../../shared/time';

export type ApiVersion = 'v1' | 'v2' | 'v2.1';

/**
 * Everything that differs between API versions, in one place. Serializers and response schemas read these
 * flags; nothing else in the code asks which version it is serving.
 */
export interface VersionFeatures {
  version: ApiVersion;
  /** Prefix of the OpenAPI component names of this version's response schemas. */
  schemaPrefix: string;
  /** v1 and v2: Swiss local time with offset; v2.1: UTC with Z. */
  timestampStyle: TimestampStyle;
  /** v2: `custom_fields` on donation entries and contacts. */
  customFields: boolean;
  /** v2.1: `checkout` (number, total, currency) on every entry of the donations list. */
  checkoutOnDonationEntries: boolean;
  /**
   * What counts as one donation of a contact. `position`: every position is its own entry and counts once.
   * `checkout`: a multi-checkout is one entry with the total and its `positions`, and counts once.
   */
  contactDonationUnit: 'position' | 'checkout';
}

export const VERSION_FEATURES: Readonly<Record<ApiVersion, VersionFeatures>> = {
  v1: {
    version: 'v1',
    schemaPrefix: 'V1',
    timestampStyle: 'swiss-local',
    customFields: false,
    checkoutOnDonationEntries: false,
    contactDonationUnit: 'position',
  },
  v2: {
    version: 'v2',
    schemaPrefix: 'V2',
    timestampStyle: 'swiss-local',
    customFields: true,
    checkoutOnDonationEntries: false,
    contactDonationUnit: 'position',
  },
  'v2.1': {
    version: 'v2.1',
    schemaPrefix: 'V2_1',
    timestampStyle: 'utc',
    customFields: true,
    checkoutOnDonationEntries: true,
    contactDonationUnit: 'checkout',
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
