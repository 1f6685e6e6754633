/**
 * What the payload renderers read: plain values loaded from the database beforehand, so that rendering is a pure
 * function of these views and the payload version's features.
 */

import type { Donor } from '../../shared/donor-fields';

export interface CampaignRef {
  id: number;
  title: string;
}

export interface PaymentView {
  transactionId: string;
  method: string;
  status: 'completed' | 'pending';
}

export interface PositionView {
  number: string;
  amountMinor: number;
  campaign: CampaignRef | null;
  purpose: string | null;
}

/** One payment (checkout) with its positions in position order; the first position's number is the payment's. */
export interface PaymentSnapshot {
  number: string;
  createdAt: Date;
  currency: string;
  /** The webhook `donor`, without `custom_fields` (those belong to the payment, see customFields). */
  donor: Donor;
  customFields: Record<string, string | boolean>;
  payment: PaymentView;
  invoice: string | null;
  positions: PositionView[];
}

export interface ReconciliationView {
  paidOutMinor: number;
  feeMinor: number;
}

export interface NewsletterSubscriptionView {
  id: number;
  contactId: number | null;
  gender: string;
  firstName: string | null;
  lastName: string | null;
  email: string;
  language: string;
  confirmedAt: Date;
}

export const SHOP_CUSTOMER_FIELDS = [
  'gender',
  'first_name',
  'last_name',
  'email',
  'phone',
  'company',
  'department',
  'care_of',
  'po_box',
  'street',
  'street_number',
  'postal_code',
  'city',
  'country',
  'language',
] as const;

export const SHOP_ADDRESS_FIELDS = [
  'first_name',
  'last_name',
  'company',
  'department',
  'care_of',
  'po_box',
  'street',
  'street_number',
  'postal_code',
  'city',
  'country',
] as const;

export type ShopCustomer = Record<(typeof SHOP_CUSTOMER_FIELDS)[number], string | null>;
export type ShopAddress = Record<(typeof SHOP_ADDRESS_FIELDS)[number], string | null>;

export interface ShopOrderItemView {
  articleNumber: string;
  quantity: number;
  unitPriceNetMinor: number;
  unitPriceGrossMinor: number;
  discountPercentage: number;
  totalPriceGrossMinor: number;
}

export interface ShopOrderView {
  number: string;
  createdAt: Date;
  customer: ShopCustomer;
  invoiceAddress: ShopAddress;
  deliveryAddress: ShopAddress;
  items: ShopOrderItemView[];
  currency: string;
  totalPriceGrossMinor: number;
  totalVatMinor: number;
  totalDiscountMinor: number;
  payment: PaymentView;
  shipping: { method: string; costMinor: number };
}
