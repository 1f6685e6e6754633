/**
 * What the payload renderers read: plain values loaded from the database beforehand, so that rendering is a pure
 * function of these views and the payload version's features.
 */

import type { Donor, Gender } from '../../shared/donor-fields';
import { type ShopAddress, type ShopCustomer, shopAddressShape, shopCustomerShape } from '../schemas/payload-schemas';

export type { ShopAddress, ShopCustomer };

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
  /** The provider's payout currency, which both amounts are in: v1 and v2 split them in its smallest amounts. */
  currency: string;
}

export interface NewsletterSubscriptionView {
  id: number;
  contactId: number | null;
  gender: Gender | '';
  firstName: string | null;
  lastName: string | null;
  email: string;
  language: string;
  confirmedAt: Date;
}

/** The payload's field order, the schemas' (stored snapshots do not keep theirs). */
export const SHOP_CUSTOMER_FIELDS = Object.keys(shopCustomerShape) as (keyof ShopCustomer)[];
export const SHOP_ADDRESS_FIELDS = Object.keys(shopAddressShape) as (keyof ShopAddress)[];

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
