import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import type { PaymentStatus, PaymentType } from '../../db/models';
import type { Environment } from '../../shared/environment';
import { DONOR_FIELDS, type Donor, type DonorField } from '../../shared/donor-fields';

/** The donor's fields under a `donor_` prefix, beside the columns of the other tables. */
export type DonorColumns = { [F in DonorField as `donor_${F}`]: Donor[F] };

/** One position with its checkout, contact, campaign and recurring donation: everything a donation entry shows. */
export interface DonationRow extends DonorColumns {
  number: string;
  position: number;
  environment: Environment;
  created_at: Date;
  amount_minor: number;
  purpose: string | null;
  payment_type: PaymentType;
  contact_id: number;
  campaign_id: number | null;
  campaign_title: string | null;
  checkout_id: number;
  checkout_number: string;
  checkout_total_minor: number;
  currency: string;
  transaction_id: string;
  payment_method: string;
  payment_status: PaymentStatus;
  invoice_reference: string | null;
  custom_fields: Record<string, string | boolean>;
  recurring_id: number | null;
  recurring_interval: 'monthly' | 'quarterly' | 'yearly' | null;
}

const COLUMNS = [
  'd.number',
  'd.position',
  'd.environment',
  'd.created_at',
  'd.amount_minor',
  'd.purpose',
  'd.payment_type',
  'd.contact_id',
  'cp.id as campaign_id',
  'cp.title as campaign_title',
  'c.id as checkout_id',
  'c.number as checkout_number',
  'c.total_amount_minor as checkout_total_minor',
  'c.currency',
  'c.transaction_id',
  'c.payment_method',
  'c.payment_status',
  'c.invoice_reference',
  'c.custom_fields',
  'rd.id as recurring_id',
  'rd.interval as recurring_interval',
  ...DONOR_FIELDS.map((field) => `ct.${field} as donor_${field}`),
];

/** Positions joined to what their entries show; callers add the filter and the order. */
export function donationRows(db: Db): Knex.QueryBuilder {
  return db('donations as d')
    .join('checkouts as c', 'c.id', 'd.checkout_id')
    .join('contacts as ct', 'ct.id', 'd.contact_id')
    .leftJoin('campaigns as cp', 'cp.id', 'd.campaign_id')
    .leftJoin('recurring_donations as rd', 'rd.id', 'd.recurring_donation_id')
    .select(COLUMNS);
}

/** Positions created in [start, end), in output order: time, then number (same-width numbers from one sequence). */
export function donationRowsInPeriod(db: Db, environment: Environment, start: Date, end: Date): Knex.QueryBuilder {
  return donationRows(db)
    .where('d.environment', environment)
    .where('d.created_at', '>=', start)
    .where('d.created_at', '<', end)
    .orderBy([{ column: 'd.created_at' }, { column: 'd.number' }]);
}

/** All positions of one contact, each checkout's positions together and in position order. */
export function donationRowsOfContact(db: Db, environment: Environment, contactId: number): Knex.QueryBuilder {
  return donationRows(db)
    .where('d.contact_id', contactId)
    .where('d.environment', environment)
    .orderBy([{ column: 'c.created_at' }, { column: 'c.id' }, { column: 'd.position' }]);
}
