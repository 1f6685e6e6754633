import { z } from 'zod';
import type { DonorField } from '../../shared/donor-fields';
import type { TimestampStyle } from '../../shared/time';
import { type ApiVersion, VERSION_FEATURES, type VersionFeatures } from './features';

/*
 * Response schemas: the OpenAPI document is generated from them and the tests validate every response against
 * that document. Objects are strict (additionalProperties: false), so a field that leaks into an older version
 * fails validation.
 */

const TIMESTAMP_PATTERNS: Record<TimestampStyle, { pattern: RegExp; description: string; example: string }> = {
  'swiss-local': {
    pattern: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/,
    description: 'Swiss local time (Europe/Zurich) with its offset',
    example: '2025-07-15T12:30:00+02:00',
  },
  utc: {
    pattern: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/,
    description: 'UTC with Z',
    example: '2025-07-15T10:30:00Z',
  },
};

const timestamp = (style: TimestampStyle) => {
  const { pattern, description, example } = TIMESTAMP_PATTERNS[style];
  return z.string().regex(pattern).meta({ format: 'date-time', description, example });
};

const amount = z.number().meta({ description: 'Amount in the currency, at most 2 decimals', example: 50 });
const currency = z.string().length(3).meta({ description: 'ISO 4217', example: 'CHF' });
export const environmentValues = ['TEST', 'PRODUCTION'] as const;
const environment = z.enum(environmentValues);
const gender = z.enum(['male', 'female', 'prefer-not-to-say']);
const customFields = z
  .record(z.string(), z.union([z.string(), z.boolean()]))
  .meta({ description: 'Answers to the custom fields of the donation form: text, or true/false for checkboxes' });

const campaign = z.strictObject({ id: z.number().int(), title: z.string() }).meta({ id: 'Campaign' });

/** The donor fields, shared by the donor object of donation entries and by contacts. */
const donorShape = {
  gender,
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  company: z.string().nullable(),
  po_box: z.string().nullable(),
  street: z.string(),
  street_number: z.string(),
  postal_code: z.string(),
  city: z.string(),
  country: z.string().length(2).meta({ description: 'ISO 3166-1 alpha-2' }),
  language: z.string().length(2).meta({ description: 'ISO 639-1' }),
  newsletter: z.boolean(),
} satisfies Record<DonorField, z.ZodType>;

const donor = z.strictObject(donorShape).meta({ id: 'Donor' });

const payment = z
  .strictObject({
    transaction_id: z.string(),
    method: z.string().meta({ description: 'Payment method code (VIS, ECA, TWI, PAP, PFC, PEF, INV, …)' }),
    status: z.enum(['completed', 'pending']),
  })
  .meta({ id: 'Payment' });

const recurring = z
  .strictObject({ id: z.number().int(), interval: z.enum(['monthly', 'quarterly', 'yearly']) })
  .meta({ id: 'Recurring' });

/*
 * `schema.nullable()` of a named schema would make the component itself nullable in the generated document;
 * an explicit union with null keeps the reference exact.
 */
const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

const checkout = z
  .strictObject({
    number: z.string().meta({ description: 'Multi-checkout number (the number of its first position)' }),
    total_amount: amount,
    currency,
  })
  .meta({ id: 'Checkout' });

const position = z
  .strictObject({
    id: z.string().meta({ description: 'Position (donation) number' }),
    amount,
    campaign: orNull(campaign),
    purpose: z.string().nullable(),
    payment_method: z.string(),
  })
  .meta({ id: 'Position' });

const donationEntryFields = (features: VersionFeatures) => ({
  id: z.string().meta({ description: 'Donation (position) number' }),
  created_at: timestamp(features.timestampStyle),
  environment,
  payment_type: z.enum(['single', 'recurring_init', 'recurring_interval', 'crowdfunding']),
  amount,
  currency,
  campaign: orNull(campaign),
  purpose: z.string().nullable(),
  contact_id: z.number().int(),
  donor,
  payment,
  invoice: z.string().nullable().meta({ description: 'QR invoice reference for INV payments, otherwise null' }),
  recurring: orNull(recurring),
  ...(features.customFields ? { custom_fields: customFields } : {}),
});

function schemasFor(features: VersionFeatures) {
  const name = (resource: string) => `${features.schemaPrefix}${resource}`;
  const donationEntry = z
    .strictObject({
      ...donationEntryFields(features),
      ...(features.checkoutOnDonationEntries ? { checkout } : {}),
    })
    .meta({ id: name('DonationEntry') });

  const contactDonation =
    features.contactDonationUnit === 'checkout'
      ? z
          .strictObject({
            ...donationEntryFields(features),
            id: z.string().meta({ description: 'Checkout number; for a single donation its donation number' }),
            amount: amount.meta({ description: 'Total of all positions' }),
            campaign: orNull(campaign).meta({ description: 'Null for a multi-checkout' }),
            purpose: z.string().nullable().meta({ description: 'Null for a multi-checkout' }),
            positions: z.array(position),
          })
          .meta({ id: name('ContactDonation') })
      : z.strictObject(donationEntryFields(features)).meta({ id: name('ContactDonation') });

  const statistics = z
    .strictObject({
      donation_count: z.number().int(),
      first_donation_at: timestamp(features.timestampStyle).nullable(),
      last_donation_at: timestamp(features.timestampStyle).nullable(),
      totals: z.array(z.strictObject({ currency, amount })),
    })
    .meta({ id: name('ContactStatistics') });

  const contact = z
    .strictObject({
      id: z.number().int(),
      ...donorShape,
      created_at: timestamp(features.timestampStyle),
      statistics,
      ...(features.customFields ? { custom_fields: customFields } : {}),
    })
    .meta({ id: name('Contact') });

  const newsletterSubscription = z
    .strictObject({
      subscription_id: z.number().int(),
      contact_id: z.number().int().nullable(),
      gender: z.enum(['male', 'female', 'prefer-not-to-say', '']),
      first_name: z.string().nullable(),
      last_name: z.string().nullable(),
      email: z.string(),
      language: z.string().length(2),
      opt_in: z.literal(true),
      opt_in_date: timestamp(features.timestampStyle),
    })
    .meta({ id: name('NewsletterSubscription') });

  return {
    donationList: z.array(donationEntry),
    contactDonationList: z.array(contactDonation),
    contactPage: page(contact).meta({ id: name('ContactPage') }),
    newsletterSubscriptionPage: page(newsletterSubscription).meta({ id: name('NewsletterSubscriptionPage') }),
  };
}

function page<T extends z.ZodType>(result: T) {
  const link = z.string().nullable().meta({ format: 'uri', description: 'Absolute URL of the neighbouring page' });
  return z.strictObject({ count: z.number().int(), next: link, previous: link, results: z.array(result) });
}

export const campaignLinkConfigSchema = z
  .strictObject({
    id: z.string(),
    campaign: campaign,
    active: z.boolean(),
    currency,
    amounts: z.array(amount).meta({ description: 'Suggested amounts' }),
    default_amount: amount,
    minimum_amount: amount,
    payment_methods: z.array(z.string()),
    purposes: z.array(z.string()),
    recurring: z.strictObject({
      enabled: z.boolean(),
      intervals: z.array(z.enum(['monthly', 'quarterly', 'yearly'])),
    }),
    custom_fields: z.array(
      z.strictObject({
        name: z.string(),
        type: z.enum(['text', 'checkbox']),
        label: z.string(),
        required: z.boolean(),
      }),
    ),
    cover_fees: z.boolean().meta({ description: 'Whether the donor may choose to cover the fees' }),
  })
  .meta({ id: 'CampaignLinkConfig' });

// Built once: component ids are registered globally and must stay unique.
export const RESPONSE_SCHEMAS: Readonly<Record<ApiVersion, ReturnType<typeof schemasFor>>> = {
  v1: schemasFor(VERSION_FEATURES.v1),
  v2: schemasFor(VERSION_FEATURES.v2),
  'v2.1': schemasFor(VERSION_FEATURES['v2.1']),
};
