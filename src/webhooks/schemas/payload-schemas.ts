import { z } from 'zod';
import type { TimestampStyle } from '../../shared/time';
import {
  amount,
  campaign,
  currency,
  customFields,
  donorShape,
  orNull,
  paymentShape,
  timestamp,
} from '../../shared/value-schemas';
import type { WebhookEventType } from '../event-types';
import type { PayloadFeatures } from '../payload-versions';

/*
 * The `data` of every event as zod schemas. Each schema is built from the payload version's features, the same
 * declaration the renderers read (payload-versions.ts), and the renderers' output types are inferred from the
 * widest of them (`…Data` below), so a field the renderers write and the schemas lack does not compile; the tests
 * render every case of every version and validate it against its exact schema (test/unit/payloads.test.ts).
 */

const customFieldsWhenAnswered = customFields.optional().meta({
  description: 'Answers given with this donation; the key is absent when there are none',
});

const donorWithoutAnswers = z.strictObject(donorShape);
const donorWithAnswers = z.strictObject({ ...donorShape, custom_fields: customFieldsWhenAnswered });

/** v1 has no custom fields; from v2 the donor carries them when the donation has answers. */
const donor = (features: PayloadFeatures) => (features.customFields ? donorWithAnswers : donorWithoutAnswers);

const reconciliationShape = {
  paid_out_amount: amount.meta({ description: "Paid out by the provider after its fee, in the provider's payout currency" }),
  fee_amount: amount.meta({ description: "The provider's fee, in the payout currency" }),
  reconciled: z.literal(true),
};

const position = z.strictObject({
  id: z.string().meta({ description: 'Position (donation) number; the first is the multi-checkout number' }),
  amount,
  campaign: orNull(campaign),
  purpose: z.string().nullable(),
});

const donationShape = (features: PayloadFeatures, event: DonationEventType) => ({
  id: z.string().meta({ description: 'Donation number; for a multi-checkout on v2.1 the multi-checkout number' }),
  created_at: timestamp(features.timestamps),
  amount: amount.meta({ description: 'For a multi-checkout (v2.1) the total of all positions' }),
  currency,
  campaign: orNull(campaign).meta({ description: 'Null for a multi-checkout (v2.1)' }),
  purpose: z.string().nullable().meta({ description: 'Null for a multi-checkout (v2.1)' }),
  donor: donor(features),
  payment: z.strictObject(event === 'donation.reconciled' ? { ...paymentShape, ...reconciliationShape } : paymentShape),
  invoice: z.string().nullable().meta({ description: 'Reference of the QR invoice for INV payments, otherwise null' }),
});

export type DonationEventType = Extract<WebhookEventType, `donation.${string}`>;

/** `positions`: v2.1 in donation.completed and donation.reconciled; never in a recurring follow-up. */
export const carriesPositions = (features: PayloadFeatures, event: DonationEventType) =>
  features.checkouts === 'whole-checkout' && event !== 'donation.recurring_completed';

function donationSchema(features: PayloadFeatures, event: DonationEventType) {
  const shape = donationShape(features, event);
  return z.strictObject({
    donation: carriesPositions(features, event)
      ? z.strictObject({ ...shape, positions: z.array(position).min(1) })
      : z.strictObject(shape),
  });
}

export function newsletterSubscriptionSchema(style: TimestampStyle) {
  return z.strictObject({
    subscription_id: z.number().int(),
    contact_id: z.number().int().nullable(),
    gender: z.enum(['male', 'female', 'prefer-not-to-say', '']).meta({ description: 'Empty when unknown' }),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    email: z.string(),
    language: z.string().length(2).meta({ description: 'ISO 639-1' }),
    opt_in: z.literal(true),
    opt_in_date: timestamp(style).meta({ description: 'When the sign-up was confirmed (double opt-in)' }),
  });
}

const text = z.string();
const optionalText = z.string().nullable();

/** What a shop address and a shop customer share, in the spec's order. */
const addressLines = {
  company: optionalText,
  department: optionalText,
  care_of: optionalText,
  po_box: optionalText,
  street: text,
  street_number: optionalText,
  postal_code: text,
  city: text,
  country: z.string().length(2).meta({ description: 'ISO 3166-1 alpha-2' }),
};

export const shopAddressShape = { first_name: text, last_name: text, ...addressLines };

export const shopCustomerShape = {
  gender: donorShape.gender,
  first_name: text,
  last_name: text,
  email: text,
  phone: optionalText,
  ...addressLines,
  language: z.string().length(2).meta({ description: 'ISO 639-1' }),
};

function shopOrderSchema(style: TimestampStyle) {
  const address = z.strictObject(shopAddressShape);
  return z.strictObject({
    shop_order: z.strictObject({
      id: z.string().meta({ description: 'Order number' }),
      created_at: timestamp(style),
      customer: z.strictObject(shopCustomerShape),
      invoice_address: address,
      delivery_address: address,
      items: z.array(
        z.strictObject({
          article_number: z.string(),
          quantity: z.number().int(),
          unit_price_net: amount,
          unit_price_gross: amount,
          discount_percentage: z.number(),
          total_price_gross: amount,
        }),
      ),
      currency,
      total_price_gross: amount,
      total_vat: amount,
      total_discount: amount,
      payment: z.strictObject(paymentShape),
      shipping: z.strictObject({ method: z.string(), cost: amount }),
    }),
  });
}

/** The exact `data` of one event type on one payload version. */
export function dataSchema(event: WebhookEventType, features: PayloadFeatures) {
  switch (event) {
    case 'donation.completed':
    case 'donation.recurring_completed':
    case 'donation.reconciled':
      return donationSchema(features, event);
    case 'newsletter.subscribed':
      return z.strictObject({ newsletter_subscription: newsletterSubscriptionSchema(features.timestamps) });
    case 'shop_order.completed':
      return shopOrderSchema(features.timestamps);
  }
}

/*
 * The widest shapes, for the renderers' types: every field any version sends, the version-dependent ones optional.
 * Only types are taken from these; validation always uses the exact schema of the version.
 */
const widest: PayloadFeatures = { version: 'v2.1', timestamps: 'utc', customFields: true, checkouts: 'whole-checkout' };
const widestDonation = z.strictObject({
  ...donationShape(widest, 'donation.completed'),
  payment: z.strictObject({ ...paymentShape, ...z.strictObject(reconciliationShape).partial().shape }),
  positions: z.array(position).optional(),
});

export type DonorObject = z.output<typeof donorWithAnswers>;
export type PaymentObject = z.output<typeof widestDonation>['payment'];
export type PositionObject = z.output<typeof position>;
export type DonationData = { donation: z.output<typeof widestDonation> };
export type NewsletterSubscriptionObject = z.output<ReturnType<typeof newsletterSubscriptionSchema>>;
export type NewsletterData = { newsletter_subscription: NewsletterSubscriptionObject };
export type ShopOrderData = z.output<ReturnType<typeof shopOrderSchema>>;
export type ShopCustomer = z.output<z.ZodObject<typeof shopCustomerShape>>;
export type ShopAddress = z.output<z.ZodObject<typeof shopAddressShape>>;
export type WebhookData = DonationData | NewsletterData | ShopOrderData;
