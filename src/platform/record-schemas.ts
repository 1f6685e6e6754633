import { z } from 'zod';

/*
 * What the platform API answers, as documented in the OpenAPI document; the tests check every answer against it.
 * The presenters beside each command build these objects.
 */

const amount = z.number().meta({ description: 'In the currency’s units, at most 2 decimals' });
const utcTimestamp = z.string().meta({ description: 'UTC, ISO 8601 with Z', example: '2025-07-15T10:30:00Z' });
const paymentState = z.strictObject({ transaction_id: z.string(), method: z.string(), status: z.enum(['completed', 'pending']) });

export const paymentRecordSchema = z
  .strictObject({
    number: z.string().meta({ description: 'Checkout number (the first position’s donation number)' }),
    transaction_id: z.string(),
    environment: z.enum(['TEST', 'PRODUCTION']),
    contact_id: z.number().int(),
    currency: z.string(),
    total_amount: amount,
    payment: paymentState,
    invoice: z.string().nullable().meta({ description: 'Reference of a QR invoice (INV), otherwise null' }),
    recurring_id: z.number().int().nullable(),
    created_at: utcTimestamp,
    donations: z.array(
      z.strictObject({
        number: z.string(),
        position: z.number().int(),
        amount,
        campaign_id: z.number().int().nullable(),
        purpose: z.string().nullable(),
        payment_type: z.enum(['single', 'recurring_init', 'recurring_interval', 'crowdfunding']),
        recurring_id: z.number().int().nullable(),
      }),
    ),
  })
  .meta({ id: 'PlatformPayment' });

export const reconciliationRecordSchema = z
  .strictObject({
    transaction_id: z.string(),
    number: z.string(),
    paid_out_amount: amount,
    fee_amount: amount,
    payout_currency: z.string(),
    created_at: utcTimestamp,
  })
  .meta({ id: 'PlatformReconciliation' });

export const signUpRecordSchema = z
  .strictObject({
    subscription_id: z.number().int(),
    contact_id: z.number().int().nullable(),
    gender: z.string().meta({ description: 'Empty when not given' }),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    email: z.string(),
    language: z.string(),
    channel: z.string(),
    confirmed: z.boolean(),
    confirmed_at: utcTimestamp.nullable(),
    created_at: utcTimestamp,
  })
  .meta({ id: 'PlatformNewsletterSignUp' });

export const shopOrderRecordSchema = z
  .strictObject({
    number: z.string(),
    transaction_id: z.string(),
    environment: z.enum(['TEST', 'PRODUCTION']),
    customer_type: z.enum(['guest', 'registered']),
    contact_id: z.number().int().nullable(),
    currency: z.string(),
    total_price_gross: amount,
    payment: paymentState,
    created_at: utcTimestamp,
  })
  .meta({ id: 'PlatformShopOrder' });

export const campaignListSchema = z
  .strictObject({
    results: z.array(
      z.strictObject({
        id: z.number().int(),
        title: z.string(),
        link_ids: z.array(z.string()).meta({ description: 'Campaign links of the campaign (active or not), by id' }),
      }),
    ),
  })
  .meta({ id: 'PlatformCampaigns' });
