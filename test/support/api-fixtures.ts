import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/knex';
import type { PaymentStatus, PaymentType } from '../../src/donations/payment-store';
import type { Environment } from '../../src/shared/environment';
import { pickDonor } from '../../src/shared/donor-fields';
import { PLATFORM_DONOR } from './platform-donor';

/*
 * Rows for the read API, inserted straight into the schema (the write side is built separately). Swiss donors,
 * a multi-checkout, both environments, and donations on both sides of the 2025 daylight-saving changes.
 */

export async function insertCampaign(db: Db, title: string): Promise<number> {
  const [{ id }] = await db('campaigns').insert({ title }).returning('id');
  return id;
}

/** Campaign links of a campaign: each a small active CHF form of one amount, with the fields the link sets. */
export async function insertCampaignLinks(db: Db, campaignId: number, links: Array<{ id: string } & Record<string, unknown>>): Promise<void> {
  const form = { currency: 'CHF', amounts_minor: [1000], default_amount_minor: 1000, minimum_amount_minor: 100, payment_methods: ['TWI'] };
  await db('campaign_links').insert(links.map((link) => ({ campaign_id: campaignId, ...form, ...link })));
}

export interface Person {
  gender: string;
  first_name: string;
  last_name: string;
  email: string;
  company?: string | null;
  po_box?: string | null;
  street: string;
  street_number: string;
  postal_code: string;
  city: string;
  country: string;
  language: string;
  newsletter?: boolean;
  custom_fields?: Record<string, string | boolean>;
  created_at?: string;
  updated_at?: string;
}

export async function insertContact(db: Db, environment: Environment, person: Person): Promise<number> {
  const [{ id }] = await db('contacts')
    .insert({ environment, ...person, custom_fields: JSON.stringify(person.custom_fields ?? {}) })
    .returning('id');
  return id;
}

export interface PositionInput {
  amountMinor: number;
  campaignId?: number | null;
  purpose?: string | null;
  paymentType?: PaymentType;
  recurringId?: number | null;
}

export interface CheckoutInput {
  contactId: number;
  environment: Environment;
  createdAt: string;
  positions: PositionInput[];
  currency?: string;
  method?: string;
  status?: PaymentStatus;
  invoiceReference?: string | null;
  customFields?: Record<string, string | boolean>;
  transactionId?: string;
}

export interface InsertedCheckout {
  id: number;
  number: string;
  transactionId: string;
  /** Donation numbers of the positions, in position order; the first is the checkout number. */
  positions: string[];
}

/** The donor snapshot a checkout stores, as JSON: the contact's donor fields as they are now. */
export async function donorSnapshotOf(db: Db, contactId: number): Promise<string> {
  return JSON.stringify(pickDonor(await db('contacts').where({ id: contactId }).first()));
}

export async function insertCheckout(db: Db, input: CheckoutInput): Promise<InsertedCheckout> {
  return db.transaction(async (trx) => {
    const numbers: string[] = [];
    for (let i = 0; i < input.positions.length; i += 1) {
      const { rows } = await trx.raw("SELECT nextval('donation_number_seq')::text AS number");
      numbers.push(rows[0].number);
    }
    const transactionId = input.transactionId ?? `pay_${randomBytes(8).toString('hex')}`;
    const [{ id }] = await trx('checkouts')
      .insert({
        number: numbers[0],
        environment: input.environment,
        contact_id: input.contactId,
        donor: await donorSnapshotOf(trx, input.contactId),
        currency: input.currency ?? 'CHF',
        total_amount_minor: input.positions.reduce((sum, position) => sum + position.amountMinor, 0),
        transaction_id: transactionId,
        payment_method: input.method ?? 'TWI',
        payment_status: input.status ?? 'completed',
        invoice_reference: input.invoiceReference ?? null,
        recurring_donation_id: input.positions[0].recurringId ?? null,
        custom_fields: JSON.stringify(input.customFields ?? {}),
        created_at: input.createdAt,
      })
      .returning('id');
    await trx('donations').insert(
      input.positions.map((position, index) => ({
        number: numbers[index],
        checkout_id: id,
        position: index + 1,
        environment: input.environment,
        contact_id: input.contactId,
        created_at: input.createdAt,
        amount_minor: position.amountMinor,
        campaign_id: position.campaignId ?? null,
        purpose: position.purpose ?? null,
        payment_type: position.paymentType ?? 'single',
        recurring_donation_id: position.recurringId ?? null,
      })),
    );
    return { id, number: numbers[0], transactionId, positions: numbers };
  });
}

/** The donor of the platform tests, as a contact of the read API. */
export const ANNA = {
  ...PLATFORM_DONOR,
  custom_fields: { 'Anrede im Brief': 'Liebe Anna', 'Spendenbestätigung per Post': true },
  created_at: '2024-11-02T09:00:00Z',
  updated_at: '2025-03-30T10:15:00Z',
} satisfies Person;

export const LUCA: Person = {
  gender: 'male',
  first_name: 'Luca',
  last_name: 'Rossi',
  email: 'luca.rossi@example.ch',
  company: 'Rossi Costruzioni SA',
  po_box: 'Casella postale 214',
  street: 'Via Nassa',
  street_number: '5',
  postal_code: '6900',
  city: 'Lugano',
  country: 'CH',
  language: 'it',
  created_at: '2025-01-15T14:00:00Z',
  updated_at: '2025-10-26T01:30:00Z',
};

export const CLAIRE: Person = {
  gender: 'prefer-not-to-say',
  first_name: 'Claire',
  last_name: 'Dubois',
  email: 'claire.dubois@example.ch',
  street: 'Rue du Rhône',
  street_number: '42',
  postal_code: '1204',
  city: 'Genève',
  country: 'CH',
  language: 'fr',
  created_at: '2025-06-01T08:00:00Z',
  updated_at: '2025-06-01T08:00:00Z',
};

export const MARCO: Person = {
  gender: 'male',
  first_name: 'Marco',
  last_name: 'Keller',
  email: 'marco.keller@example.ch',
  street: 'Marktgasse',
  street_number: '3a',
  postal_code: '3011',
  city: 'Bern',
  country: 'CH',
  language: 'de',
  created_at: '2025-02-01T08:00:00Z',
  updated_at: '2025-07-15T10:30:00Z',
};

/** A QR reference: 26 digits and its modulo-10 recursive check digit. */
export const QR_REFERENCE = '210000000003139471430009017';

/** The scenario most API tests read; every id and number they assert on is returned. */
export async function seedDonationScenario(db: Db) {
  const bergwald = await insertCampaign(db, 'Bergwaldprojekt 2025');
  const nothilfe = await insertCampaign(db, 'Nothilfe Ukraine');
  const trinkwasser = await insertCampaign(db, 'Trinkwasser für Nepal');

  const anna = await insertContact(db, 'TEST', ANNA);
  const luca = await insertContact(db, 'TEST', LUCA);
  const claire = await insertContact(db, 'TEST', CLAIRE);
  // The same person as a live donor: contacts belong to one environment.
  const annaLive = await insertContact(db, 'PRODUCTION', { ...ANNA, custom_fields: {} });
  const marcoLive = await insertContact(db, 'PRODUCTION', MARCO);

  // 2025-03-30 is the spring change: 00:30 is still +01:00, 12:15 is already +02:00.
  const annaSingle = await insertCheckout(db, {
    contactId: anna,
    environment: 'TEST',
    createdAt: '2025-03-29T23:30:00Z',
    positions: [{ amountMinor: 5000, campaignId: bergwald, purpose: 'Aufforstung Graubünden' }],
    customFields: { 'Anrede im Brief': 'Liebe Anna', 'Spendenbestätigung per Post': true },
  });
  const annaMulti = await insertCheckout(db, {
    contactId: anna,
    environment: 'TEST',
    createdAt: '2025-03-30T10:15:00Z',
    method: 'VIS',
    positions: [
      { amountMinor: 3000, campaignId: bergwald, purpose: 'Aufforstung Graubünden' },
      { amountMinor: 2050, campaignId: nothilfe, purpose: 'Winterhilfe' },
      { amountMinor: 1525, campaignId: trinkwasser, purpose: null },
    ],
  });

  const [{ id: lucaRecurring }] = await db('recurring_donations')
    .insert({
      environment: 'TEST',
      contact_id: luca,
      campaign_id: nothilfe,
      purpose: 'Winterhilfe',
      amount_minor: 10000,
      currency: 'CHF',
      interval: 'monthly',
      payment_method: 'INV',
      created_at: '2025-09-26T08:00:00Z',
    })
    .returning('id');
  // 2025-10-26 is the autumn change: 02:30 happens twice, first at +02:00, then at +01:00.
  const lucaInit = await insertCheckout(db, {
    contactId: luca,
    environment: 'TEST',
    createdAt: '2025-10-26T00:30:00Z',
    method: 'INV',
    status: 'pending',
    invoiceReference: QR_REFERENCE,
    positions: [
      { amountMinor: 10000, campaignId: nothilfe, purpose: 'Winterhilfe', paymentType: 'recurring_init', recurringId: lucaRecurring },
    ],
  });
  const lucaInterval = await insertCheckout(db, {
    contactId: luca,
    environment: 'TEST',
    createdAt: '2025-10-26T01:30:00Z',
    method: 'INV',
    status: 'pending',
    invoiceReference: '210000000003139471430009020',
    positions: [
      {
        amountMinor: 10000,
        campaignId: nothilfe,
        purpose: 'Winterhilfe',
        paymentType: 'recurring_interval',
        recurringId: lucaRecurring,
      },
    ],
  });
  // 23:30 local on 10-26 is still that (25-hour) day; midnight belongs to 10-27.
  const claireLate = await insertCheckout(db, {
    contactId: claire,
    environment: 'TEST',
    createdAt: '2025-10-26T22:30:00Z',
    currency: 'EUR',
    method: 'PAP',
    positions: [{ amountMinor: 7500, campaignId: trinkwasser, purpose: 'Brunnenbau' }],
  });
  const claireNextDay = await insertCheckout(db, {
    contactId: claire,
    environment: 'TEST',
    createdAt: '2025-10-26T23:00:00Z',
    positions: [{ amountMinor: 2000, campaignId: bergwald }],
  });

  const annaLiveGift = await insertCheckout(db, {
    contactId: annaLive,
    environment: 'PRODUCTION',
    createdAt: '2025-03-30T08:00:00Z',
    method: 'PFC',
    positions: [{ amountMinor: 25000, campaignId: bergwald, purpose: 'Aufforstung Graubünden' }],
  });
  const marcoCrowdfunding = await insertCheckout(db, {
    contactId: marcoLive,
    environment: 'PRODUCTION',
    createdAt: '2025-07-15T10:30:00Z',
    method: 'ECA',
    positions: [{ amountMinor: 4000, campaignId: trinkwasser, paymentType: 'crowdfunding' }],
  });

  return {
    campaigns: { bergwald, nothilfe, trinkwasser },
    contacts: { anna, luca, claire, annaLive, marcoLive },
    recurring: { luca: lucaRecurring },
    checkouts: { annaSingle, annaMulti, lucaInit, lucaInterval, claireLate, claireNextDay, annaLiveGift, marcoCrowdfunding },
  };
}

export type DonationScenario = Awaited<ReturnType<typeof seedDonationScenario>>;
