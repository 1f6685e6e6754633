import { z } from 'zod';
import { amount, campaign, currency, customFields, donorShape, orNull, payment, timestamp } from '../../shared/value-schemas';
import { newsletterSubscriptionSchema } from '../../webhooks/schemas/payload-schemas';
import { type ApiVersion, VERSION_FEATURES, type VersionFeatures } from './features';

/*
 * Response schemas: the OpenAPI document is generated from them and the tests validate every response against
 * that document. Objects are strict, as are the shared value schemas (src/shared/value-schemas.ts).
 */

export const environmentValues = ['TEST', 'PRODUCTION'] as const;
const environment = z.enum(environmentValues);

const donor = z.strictObject(donorShape).meta({ id: 'Donor' });

const recurring = z
  .strictObject({ id: z.number().int(), interval: z.enum(['monthly', 'quarterly', 'yearly']) })
  .meta({ id: 'Recurring' });

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
  created_at: timestamp(features.timestamps),
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
    features.checkouts === 'whole-checkout'
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
      first_donation_at: timestamp(features.timestamps).nullable(),
      last_donation_at: timestamp(features.timestamps).nullable(),
      totals: z.array(z.strictObject({ currency, amount })),
    })
    .meta({ id: name('ContactStatistics') });

  const contact = z
    .strictObject({
      id: z.number().int(),
      ...donorShape,
      created_at: timestamp(features.timestamps),
      statistics,
      ...(features.customFields ? { custom_fields: customFields } : {}),
    })
    .meta({ id: name('Contact') });

  // The webhook's newsletter_subscription object, in this version's timestamps.
  const newsletterSubscription = newsletterSubscriptionSchema(features.timestamps)
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
