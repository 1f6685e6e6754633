import type { Donor } from '../../shared/donor-fields';
import { BaseModel } from './base';
import type { Environment } from '../../shared/environment';

export type PaymentType = 'single' | 'recurring_init' | 'recurring_interval' | 'crowdfunding';
export type PaymentStatus = 'completed' | 'pending';

export class RecurringDonationModel extends BaseModel {
  static tableName = 'recurring_donations';
  id!: number;
  environment!: Environment;
  contact_id!: number;
  campaign_id!: number | null;
  purpose!: string | null;
  amount_minor!: number;
  currency!: string;
  interval!: 'monthly' | 'quarterly' | 'yearly';
  payment_method!: string;
  active!: boolean;
  created_at!: Date;
}

/** A position of a checkout: what the API and the webhooks call a donation. */
export class DonationModel extends BaseModel {
  static tableName = 'donations';
  id!: number;
  number!: string;
  checkout_id!: number;
  position!: number;
  environment!: Environment;
  contact_id!: number;
  created_at!: Date;
  amount_minor!: number;
  campaign_id!: number | null;
  purpose!: string | null;
  payment_type!: PaymentType;
  recurring_donation_id!: number | null;
}

/** One payment with one or more positions; a multi-checkout when it has more than one. */
export class CheckoutModel extends BaseModel {
  static tableName = 'checkouts';
  id!: number;
  number!: string;
  environment!: Environment;
  contact_id!: number;
  /** The donor as it stood when the payment was recorded (jsonb); every donation event of the payment shows it. */
  donor!: Donor;
  currency!: string;
  total_amount_minor!: number;
  transaction_id!: string;
  payment_method!: string;
  payment_status!: PaymentStatus;
  invoice_reference!: string | null;
  recurring_donation_id!: number | null;
  custom_fields!: Record<string, string | boolean>;
  created_at!: Date;
}

export class ReconciliationModel extends BaseModel {
  static tableName = 'reconciliations';
  id!: number;
  checkout_id!: number;
  paid_out_amount_minor!: number;
  fee_amount_minor!: number;
  payout_currency!: string;
  created_at!: Date;
}
