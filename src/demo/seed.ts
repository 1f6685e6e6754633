import type { Knex } from 'knex';
import type { Config } from '../config';
import { ApiError } from '../shared/errors';
import { ensureCampaign, insertCampaignLinksUnlessPresent } from '../campaign-links/campaign-store';
import { confirmNewsletterSubscription } from '../platform/confirm-newsletter-subscription';
import { findContactIdByEmail } from '../contacts/contact-store';
import type { CommandResult, PlatformContext } from '../platform/context';
import { checkoutInput, recordCheckout } from '../platform/record-checkout';
import { reconciliationInput, recordReconciliation } from '../platform/record-reconciliation';
import { recordRecurringPayment, recurringPaymentInput } from '../platform/record-recurring-payment';
import { recordShopOrder, shopOrderInput } from '../platform/record-shop-order';
import { runCommand } from '../platform/run-command';
import { signUpForNewsletter, signUpInput } from '../platform/sign-up-newsletter';
import { DEMO_CAMPAIGNS, DEMO_CUSTOM_FIELDS, type DemoCampaignTitle, purposesOf, shopArticle } from './swiss-data';

/**
 * Demo data for the embedded default: Swiss donors, campaigns, a campaign link, single, recurring and
 * multi-checkout donations in TEST and PRODUCTION, reconciliations, newsletter sign-ups and shop orders, spread
 * over the last six months. Everything goes through the platform commands with fixed transaction ids and
 * addresses, so a second start finds it all and creates nothing twice. Webhook events are created only if an
 * endpoint is configured at the time.
 */

const DONORS = {
  anna: { gender: 'female', first_name: 'Anna', last_name: 'Müller', email: 'anna.mueller@example.ch', street: 'Bahnhofstrasse', street_number: '12', postal_code: '8001', city: 'Zürich', language: 'de' },
  luca: { gender: 'male', first_name: 'Luca', last_name: 'Bernasconi', email: 'luca.bernasconi@example.ch', street: 'Via Nassa', street_number: '5', postal_code: '6900', city: 'Lugano', language: 'it' },
  claire: { gender: 'female', first_name: 'Claire', last_name: 'Dubois', email: 'claire.dubois@example.ch', street: 'Rue de Bourg', street_number: '20', postal_code: '1003', city: 'Lausanne', language: 'fr' },
  reto: { gender: 'male', first_name: 'Reto', last_name: 'Brunner', email: 'reto.brunner@example.ch', street: 'Marktgasse', street_number: '3', postal_code: '3011', city: 'Bern', language: 'de', company: 'Brunner Holzbau AG' },
  sandra: { gender: 'female', first_name: 'Sandra', last_name: 'Keller', email: 'sandra.keller@example.ch', street: 'Freie Strasse', street_number: '41', postal_code: '4001', city: 'Basel', language: 'de' },
  marc: { gender: 'male', first_name: 'Marc', last_name: 'Favre', email: 'marc.favre@example.ch', street: 'Rue du Rhône', street_number: '8', postal_code: '1204', city: 'Genève', language: 'fr', po_box: 'Case postale 112' },
  noemi: { gender: 'prefer-not-to-say', first_name: 'Noemi', last_name: 'Schmid', email: 'noemi.schmid@example.ch', street: 'Kapellgasse', street_number: '14', postal_code: '6004', city: 'Luzern', language: 'de' },
  peter: { gender: 'male', first_name: 'Peter', last_name: 'Gerber', email: 'peter.gerber@example.ch', street: 'Hauptgasse', street_number: '27', postal_code: '4500', city: 'Solothurn', language: 'de' },
  test: { gender: 'female', first_name: 'Tina', last_name: 'Test', email: 'tina.test@example.ch', street: 'Testweg', street_number: '1', postal_code: '8000', city: 'Zürich', language: 'de' },
} as const;
type DonorKey = keyof typeof DONORS;

interface Position {
  amount: number;
  campaign: DemoCampaignTitle | null;
  purpose?: string;
  recurring?: 'monthly' | 'quarterly' | 'yearly';
}

interface DemoCheckout {
  kind: 'checkout';
  key: string;
  daysAgo: number;
  donor: DonorKey;
  environment?: 'TEST' | 'PRODUCTION';
  method: string;
  positions: Position[];
  customFields?: Record<string, string | boolean>;
  newsletter?: boolean;
  /** Paid out and fee, reported by the provider some hours later. */
  reconciled?: [number, number];
}

interface DemoFollowUp {
  kind: 'follow-up';
  key: string;
  daysAgo: number;
  /** The key of the checkout that started the recurring donation. */
  of: string;
  reconciled?: [number, number];
}

const water = (amount: number, purpose?: string): Position => ({ amount, campaign: 'Wasser für alle', purpose });

const PAYMENTS: (DemoCheckout | DemoFollowUp)[] = [
  { kind: 'checkout', key: 'c01', daysAgo: 178, donor: 'anna', method: 'TWI', positions: [water(50, 'Brunnenbau')], customFields: { Anlass: 'Geburtstag', Spendenquittung: true }, newsletter: true, reconciled: [49.15, 0.85] },
  { kind: 'checkout', key: 'c02', daysAgo: 171, donor: 'luca', method: 'VIS', positions: [{ amount: 20, campaign: 'Schulbildung in Nepal', recurring: 'monthly' }], reconciled: [19.46, 0.54] },
  { kind: 'checkout', key: 'c03', daysAgo: 165, donor: 'claire', method: 'INV', positions: [{ amount: 100, campaign: 'Bergbauern Graubünden', purpose: 'Alpsanierung' }] },
  { kind: 'checkout', key: 'c04', daysAgo: 160, donor: 'reto', method: 'ECA', positions: [water(100, 'Brunnenbau'), { amount: 50, campaign: 'Nothilfe Ukraine' }, { amount: 25, campaign: 'Schulbildung in Nepal' }], customFields: { Spendenquittung: true }, reconciled: [170.1, 4.9] },
  { kind: 'checkout', key: 'c05', daysAgo: 150, donor: 'sandra', method: 'INV', positions: [{ amount: 30, campaign: 'Nothilfe Ukraine', recurring: 'quarterly' }] },
  { kind: 'follow-up', key: 'r01', daysAgo: 141, of: 'c02', reconciled: [19.46, 0.54] },
  { kind: 'checkout', key: 'c06', daysAgo: 133, donor: 'marc', method: 'PFC', positions: [water(75)], newsletter: true },
  { kind: 'checkout', key: 'c07', daysAgo: 120, donor: 'test', environment: 'TEST', method: 'VIS', positions: [water(10)] },
  { kind: 'follow-up', key: 'r02', daysAgo: 111, of: 'c02' },
  { kind: 'checkout', key: 'c08', daysAgo: 104, donor: 'noemi', method: 'TWI', positions: [{ amount: 40, campaign: 'Schulbildung in Nepal' }, water(60, 'Hygieneschulung')], customFields: { Anlass: 'Weihnachten' }, reconciled: [98.3, 1.7] },
  { kind: 'checkout', key: 'c09', daysAgo: 96, donor: 'anna', method: 'VIS', positions: [{ amount: 250, campaign: 'Nothilfe Ukraine' }] },
  { kind: 'follow-up', key: 'r03', daysAgo: 81, of: 'c02' },
  { kind: 'follow-up', key: 'r04', daysAgo: 60, of: 'c05' },
  { kind: 'checkout', key: 'c10', daysAgo: 58, donor: 'peter', method: 'PAP', positions: [{ amount: 35, campaign: 'Bergbauern Graubünden' }] },
  { kind: 'checkout', key: 'c11', daysAgo: 45, donor: 'test', environment: 'TEST', method: 'INV', positions: [water(15), { amount: 15, campaign: 'Nothilfe Ukraine' }] },
  { kind: 'checkout', key: 'c12', daysAgo: 40, donor: 'claire', method: 'TWI', positions: [{ amount: 80, campaign: 'Schulbildung in Nepal', purpose: 'Schulmaterial' }] },
  { kind: 'follow-up', key: 'r05', daysAgo: 51, of: 'c02' },
  { kind: 'follow-up', key: 'r06', daysAgo: 21, of: 'c02', reconciled: [19.46, 0.54] },
  { kind: 'checkout', key: 'c13', daysAgo: 12, donor: 'reto', method: 'VIS', positions: [water(500, 'Brunnenbau')], customFields: { Spendenquittung: true } },
  { kind: 'checkout', key: 'c14', daysAgo: 3, donor: 'luca', method: 'TWI', positions: [{ amount: 25, campaign: 'Nothilfe Ukraine' }], newsletter: true },
];

/**
 * Confirmed sign-ups in both environments (docs/api.md): the tester's, linked to her TEST contact as a donation
 * form in test mode links it, so the read API's default environment TEST lists one; the others are live.
 */
const SIGN_UPS = [
  { email: 'tina.test@example.ch', language: 'de', channel: 'donation_form', daysAgo: 120, confirmedAfterDays: 0, testContact: 'test' },
  { email: 'anna.mueller@example.ch', language: 'de', channel: 'donation_form', daysAgo: 178, confirmedAfterDays: 1 },
  { email: 'marc.favre@example.ch', language: 'fr', channel: 'donation_form', daysAgo: 133, confirmedAfterDays: 0 },
  { email: 'julia.meier@example.ch', first_name: 'Julia', last_name: 'Meier', gender: 'female', language: 'de', channel: 'form', daysAgo: 70, confirmedAfterDays: 2 },
  { email: 'giulia.rossi@example.ch', first_name: 'Giulia', language: 'it', channel: 'api', daysAgo: 9 },
] as const;

const SHOP_ORDERS = [
  { key: 's01', daysAgo: 88, customerType: 'registered', donor: 'sandra', method: 'PAYPAL' },
  { key: 's02', daysAgo: 17, customerType: 'guest', donor: 'peter', method: 'TWI' },
] as const;

/** A time on the day `daysAgo` days before `now`: 08:00 UTC plus some minutes, so that every item has its own. */
function dayBefore(now: Date, daysAgo: number, minutesAfterEight: number): Date {
  const day = new Date(now.getTime() - daysAgo * 24 * 60 * 60 * 1000);
  day.setUTCHours(8, minutesAfterEight, 0, 0);
  return day;
}

async function ensureCampaigns(db: Knex, now: Date): Promise<Record<DemoCampaignTitle, number>> {
  const ids = {} as Record<DemoCampaignTitle, number>;
  for (const [index, { title }] of DEMO_CAMPAIGNS.entries()) ids[title] = await ensureCampaign(db, title, dayBefore(now, 200, index));
  return ids;
}

async function ensureCampaignLinks(db: Knex, campaigns: Record<DemoCampaignTitle, number>): Promise<void> {
  await insertCampaignLinksUnlessPresent(db, [
    {
      id: 'wasser-fuer-alle',
      campaign_id: campaigns['Wasser für alle'],
      active: true,
      currency: 'CHF',
      amounts_minor: [3000, 5000, 10000, 25000],
      default_amount_minor: 5000,
      minimum_amount_minor: 500,
      payment_methods: ['TWI', 'VIS', 'ECA', 'PFC', 'PEF', 'INV'],
      purposes: [...purposesOf('Wasser für alle')],
      recurring_enabled: true,
      recurring_intervals: ['monthly', 'quarterly', 'yearly'],
      custom_fields: DEMO_CUSTOM_FIELDS,
      cover_fees: true,
    },
    {
      id: 'nothilfe-ukraine-2024',
      campaign_id: campaigns['Nothilfe Ukraine'],
      active: false,
      currency: 'CHF',
      amounts_minor: [5000, 10000],
      default_amount_minor: 5000,
      minimum_amount_minor: 1000,
      payment_methods: ['TWI', 'VIS'],
    },
  ]);
}

export interface SeedSummary {
  /** Records created by this run; 0 on every start after the first. */
  created: number;
  existing: number;
}

type Command<T> = (trx: Knex.Transaction, context: PlatformContext) => Promise<CommandResult<T>>;

/** Runs the demo's platform commands, each as at a time of its own, and counts what they created and what they found. */
class Seeder {
  readonly summary: SeedSummary = { created: 0, existing: 0 };

  constructor(
    readonly db: Knex,
    private readonly config: Config,
  ) {}

  async run<T>(when: Date, command: Command<T>): Promise<CommandResult<T>> {
    const result = await runCommand(this.db, (trx) => command(trx, { now: () => when, platform: this.config.platform }));
    this.summary[result.created ? 'created' : 'existing'] += 1;
    return result;
  }

  /** A provider reports each payment once; on a later start the report is already there. */
  async reconcile(transactionId: string, [paidOut, fee]: [number, number], when: Date): Promise<void> {
    const input = reconciliationInput.parse({ transaction_id: transactionId, paid_out_amount: paidOut, fee_amount: fee, payout_currency: 'CHF' });
    try {
      await this.run(when, (trx, context) => recordReconciliation(trx, input, context));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
      this.summary.existing += 1;
    }
  }
}

function checkoutOf(payment: DemoCheckout, transactionId: string, campaigns: Record<DemoCampaignTitle, number>) {
  return checkoutInput.parse({
    environment: payment.environment ?? 'PRODUCTION',
    currency: 'CHF',
    donor: { ...DONORS[payment.donor], country: 'CH', newsletter: payment.newsletter ?? false, custom_fields: payment.customFields },
    positions: payment.positions.map((position) => ({
      amount: position.amount,
      campaign_id: position.campaign && campaigns[position.campaign],
      purpose: position.purpose ?? null,
      payment_type: position.recurring ? 'recurring_init' : 'single',
      recurring: position.recurring && { interval: position.recurring },
    })),
    payment: { transaction_id: transactionId, method: payment.method, status: payment.method === 'INV' ? 'pending' : 'completed' },
  });
}

/** The payments in the order they were made; a follow-up after the checkout that started its recurring donation. */
async function seedPayments(seeder: Seeder, now: Date, campaigns: Record<DemoCampaignTitle, number>): Promise<void> {
  const recurringIds = new Map<string, number>();
  const chronological = [...PAYMENTS].sort((a, b) => b.daysAgo - a.daysAgo);
  for (const [index, payment] of chronological.entries()) {
    const when = dayBefore(now, payment.daysAgo, index * 7);
    const transactionId = `demo-${payment.key}`;
    if (payment.kind === 'checkout') {
      const input = checkoutOf(payment, transactionId, campaigns);
      const { record } = await seeder.run(when, (trx, context) => recordCheckout(trx, input, context));
      const recurringId = record.donations[0].recurring_id;
      if (recurringId !== null) recurringIds.set(payment.key, recurringId);
    } else {
      const recurringId = recurringIds.get(payment.of);
      if (recurringId === undefined) throw new Error(`demo follow-up ${payment.key} comes before its first payment`);
      const input = recurringPaymentInput.parse({ recurring_id: recurringId, payment: { transaction_id: transactionId } });
      await seeder.run(when, (trx, context) => recordRecurringPayment(trx, input, context));
    }
    if (payment.reconciled) {
      await seeder.reconcile(transactionId, payment.reconciled, new Date(when.getTime() + 6 * 60 * 60 * 1000));
    }
  }
}

async function seedSignUps(seeder: Seeder, now: Date): Promise<void> {
  for (const [index, signUp] of SIGN_UPS.entries()) {
    const when = dayBefore(now, signUp.daysAgo, 240 + index);
    const { daysAgo: _daysAgo, ...fields } = signUp;
    const contactId =
      'testContact' in signUp
        ? await findContactIdByEmail(seeder.db, 'TEST', DONORS[signUp.testContact].email)
        : undefined;
    const input = signUpInput.parse({ ...fields, contact_id: contactId });
    const { record } = await seeder.run(when, (trx, context) => signUpForNewsletter(trx, input, context));
    if ('confirmedAfterDays' in signUp) {
      const confirmedAt = dayBefore(now, signUp.daysAgo - signUp.confirmedAfterDays, 300 + index);
      await seeder.run(confirmedAt, (trx, context) => confirmNewsletterSubscription(trx, record.subscription_id, context));
    }
  }
}

function shopOrderOf(order: (typeof SHOP_ORDERS)[number]) {
  const { gender, first_name, last_name, email, street, street_number, postal_code, city, language } = DONORS[order.donor];
  const address = { first_name, last_name, street, street_number, postal_code, city, country: 'CH' };
  return shopOrderInput.parse({
    environment: 'PRODUCTION',
    customer_type: order.customerType,
    customer: { gender, first_name, last_name, email, phone: '+41 44 123 45 67', street, street_number, postal_code, city, country: 'CH', language },
    invoice_address: address,
    items: [
      { ...shopArticle('KAL-2026'), quantity: 2, discount_percentage: 10, total_price_gross: 35.91 },
      { ...shopArticle('KARTEN-SET'), quantity: 1, discount_percentage: 0, total_price_gross: 12 },
    ],
    currency: 'CHF',
    total_price_gross: 54.91,
    total_vat: 3.88,
    total_discount: 3.99,
    payment: { transaction_id: `demo-${order.key}`, method: order.method, status: 'completed' },
    shipping: { method: 'A-Post', cost: 7 },
  });
}

export async function seedDemoData(db: Knex, config: Config, now: Date = new Date()): Promise<SeedSummary> {
  const seeder = new Seeder(db, config);
  const campaigns = await ensureCampaigns(db, now);
  await ensureCampaignLinks(db, campaigns);
  await seedPayments(seeder, now, campaigns);
  await seedSignUps(seeder, now);
  for (const [index, order] of SHOP_ORDERS.entries()) {
    const input = shopOrderOf(order);
    await seeder.run(dayBefore(now, order.daysAgo, 360 + index), (trx, context) => recordShopOrder(trx, input, context));
  }
  return seeder.summary;
}
