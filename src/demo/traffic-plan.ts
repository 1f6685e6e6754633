import type { z } from 'zod';
import type { checkoutInput } from '../platform/record-checkout';
import type { reconciliationInput } from '../platform/record-reconciliation';
import type { recurringPaymentInput } from '../platform/record-recurring-payment';
import type { shopOrderInput } from '../platform/record-shop-order';
import type { signUpInput } from '../platform/sign-up-newsletter';
import { toAmount } from '../shared/money';
import { createRandom, type Random } from './random';
import { OCCASIONS, purposesOf, SHIPPING_METHODS, SHOP_ARTICLES } from './swiss-data';
import { address, People, type Person, postalAddress } from './traffic-people';

/**
 * Realistic platform traffic as pure data: what donation forms, payment providers, newsletter forms and the shop
 * would send, in the order they would send it. The same seed gives the same plan. Steps that need a number the
 * service hands out (a recurring donation's id, a sign-up's id) name the earlier step's key instead; the runner
 * fills the number in.
 */

export type CheckoutBody = z.input<typeof checkoutInput>;
export type FollowUpBody = Omit<z.input<typeof recurringPaymentInput>, 'recurring_id'>;
export type ReconciliationBody = z.input<typeof reconciliationInput>;
export type SignUpBody = z.input<typeof signUpInput>;
export type ShopOrderBody = z.input<typeof shopOrderInput>;

export type TrafficStep =
  | { kind: 'single-donation' | 'multi-checkout' | 'recurring-start'; body: CheckoutBody }
  /** `startedBy`: the transaction id of the recurring donation's first payment. */
  | { kind: 'recurring-follow-up'; startedBy: string; body: FollowUpBody }
  | { kind: 'reconciliation'; timing: 'immediate' | 'later'; body: ReconciliationBody }
  | { kind: 'newsletter-sign-up'; body: SignUpBody }
  /** The click on the confirmation link of the sign-up of `email`. */
  | { kind: 'newsletter-confirmation'; email: string }
  | { kind: 'shop-order'; body: ShopOrderBody }
  /** The same call once more, as a provider or shop that retries: the service must answer with what it has. */
  | { kind: 'repeat'; of: number };

export type StepKind = TrafficStep['kind'];

export const STEP_KINDS: readonly StepKind[] = [
  'single-donation',
  'multi-checkout',
  'recurring-start',
  'recurring-follow-up',
  'reconciliation',
  'newsletter-sign-up',
  'newsletter-confirmation',
  'shop-order',
  'repeat',
];

export interface TrafficPlanOptions {
  seed: number;
  count: number;
  /** Part of every transaction id, so that each run records new payments. */
  runId: string;
  /** The service's campaigns; without any, donations go to no campaign. */
  campaigns: readonly { id: number; title: string }[];
}

interface Payment {
  transactionId: string;
  totalMinor: number;
  currency: string;
  method: string;
}

/** Card acquirer and mobile payment app: the two providers that report fees and payouts. */
const PROVIDER_FEES: Record<string, { percent: number; fixedMinor: number }> = {
  TWI: { percent: 1.3, fixedMinor: 0 },
  VIS: { percent: 1.75, fixedMinor: 30 },
  ECA: { percent: 1.75, fixedMinor: 30 },
};
const PAYOUT_CURRENCY = 'CHF';
const EUR_TO_CHF = 0.94;

const DONATION_AMOUNTS_MINOR = [1000, 2000, 2500, 3000, 5000, 5000, 5000, 7500, 10000, 10000, 15000, 20000, 25000, 50000, 100000];
const RECURRING_AMOUNTS_MINOR = [1000, 2000, 2500, 3000, 5000, 10000];

/** A step due later than when it is planned: a reconciliation some hours after its payment, a confirmation click. */
interface Deferred {
  dueAt: number;
  step: TrafficStep;
}

export function planTraffic(options: TrafficPlanOptions): TrafficStep[] {
  return new TrafficPlanner(options).plan();
}

/** The plan as it grows, and what later steps refer back to. */
class TrafficPlanner {
  private readonly random: Random;
  private readonly people: People;
  private readonly steps: TrafficStep[] = [];
  private readonly recurringStarts: Payment[] = [];
  private readonly signedUp: string[] = [];
  /** The steps a provider or shop might send again. */
  private readonly repeatable: number[] = [];
  private readonly deferred: Deferred[] = [];
  private sequence = 0;

  constructor(private readonly options: TrafficPlanOptions) {
    this.random = createRandom(options.seed);
    this.people = new People(this.random);
  }

  plan(): TrafficStep[] {
    const { random, steps } = this;
    while (steps.length < this.options.count) {
      const due = this.deferred.findIndex((item) => item.dueAt <= steps.length);
      if (due >= 0) {
        steps.push(this.deferred.splice(due, 1)[0].step);
        continue;
      }
      const next = random.weighted({
        checkout: 50,
        followUp: this.recurringStarts.length > 0 ? 10 : 0,
        signUp: 12,
        shopOrder: 10,
        repeat: this.repeatable.length > 0 ? 3 : 0,
      });
      if (next === 'checkout') this.checkout();
      else if (next === 'followUp') this.followUp();
      else if (next === 'signUp') this.signUp();
      else if (next === 'shopOrder') this.shopOrder();
      else steps.push({ kind: 'repeat', of: random.pick(this.repeatable) });
    }
    return steps;
  }

  private transactionId(): string {
    return `traffic-${this.options.runId}-${String(++this.sequence).padStart(5, '0')}`;
  }

  private donor(person: Person): CheckoutBody['donor'] {
    const random = this.random;
    const custom_fields: Record<string, string | boolean> = {};
    if (random.chance(0.25)) custom_fields.Anlass = random.pick(OCCASIONS);
    if (random.chance(0.25)) custom_fields.Spendenquittung = random.chance(0.8);
    return {
      gender: person.gender,
      first_name: person.first_name,
      last_name: person.last_name,
      email: person.email,
      ...postalAddress(person),
      language: person.place.language,
      newsletter: random.chance(0.3),
      ...(Object.keys(custom_fields).length > 0 && { custom_fields }),
    };
  }

  private position(amountMinor: number) {
    const { random, options } = this;
    if (options.campaigns.length === 0 || random.chance(0.1)) return { amount: toAmount(amountMinor), campaign_id: null };
    const campaign = random.pick(options.campaigns);
    const purposes = purposesOf(campaign.title);
    const purpose = purposes.length > 0 && random.chance(0.5) ? random.pick(purposes) : null;
    return { amount: toAmount(amountMinor), campaign_id: campaign.id, purpose };
  }

  private donationAmountMinor(): number {
    const random = this.random;
    const minor = random.chance(0.15) ? random.int(5, 300) * 100 + random.pick([0, 50]) : random.pick(DONATION_AMOUNTS_MINOR);
    // A quarter of donors cover the provider's fee, which makes for odd amounts.
    return random.chance(0.25) ? Math.round(minor * 1.025) : minor;
  }

  /** Some payments by the two reporting providers are reconciled: right away or some hours (steps) later. */
  private maybeReconcile(payment: Payment): void {
    const random = this.random;
    const fee = PROVIDER_FEES[payment.method];
    if (!fee || !random.chance(0.6)) return;
    const payoutMinor = payment.currency === PAYOUT_CURRENCY ? payment.totalMinor : Math.round(payment.totalMinor * EUR_TO_CHF);
    const feeMinor = Math.min(payoutMinor, Math.round((payoutMinor * fee.percent) / 100) + fee.fixedMinor);
    const immediate = random.chance(0.4);
    this.deferred.push({
      dueAt: this.steps.length + (immediate ? 0 : random.int(5, 25)),
      step: {
        kind: 'reconciliation',
        timing: immediate ? 'immediate' : 'later',
        body: {
          transaction_id: payment.transactionId,
          paid_out_amount: toAmount(payoutMinor - feeMinor),
          fee_amount: toAmount(feeMinor),
          payout_currency: PAYOUT_CURRENCY,
        },
      },
    });
  }

  private checkout(): void {
    const random = this.random;
    const kind = random.weighted({ 'single-donation': 60, 'multi-checkout': 20, 'recurring-start': 20 } as const);
    const method =
      kind === 'recurring-start'
        ? random.weighted({ VIS: 40, ECA: 25, TWI: 15, INV: 20 })
        : random.weighted({ TWI: 35, VIS: 20, ECA: 15, PFC: 8, PEF: 5, PAP: 7, INV: 10 });
    const currency = random.chance(0.95) ? 'CHF' : 'EUR';
    const amounts =
      kind === 'multi-checkout'
        ? Array.from({ length: random.int(2, 3) }, () => this.donationAmountMinor())
        : [kind === 'recurring-start' ? random.pick(RECURRING_AMOUNTS_MINOR) : this.donationAmountMinor()];
    const positions = amounts.map((amountMinor) => ({
      ...this.position(amountMinor),
      ...(kind === 'recurring-start' && {
        payment_type: 'recurring_init' as const,
        recurring: { interval: random.weighted({ monthly: 70, quarterly: 20, yearly: 10 } as const) },
      }),
    }));
    const payment: Payment = {
      transactionId: this.transactionId(),
      totalMinor: amounts.reduce((sum, amount) => sum + amount, 0),
      currency,
      method,
    };
    this.repeatable.push(this.steps.length);
    this.steps.push({
      kind,
      body: {
        environment: random.chance(0.9) ? 'PRODUCTION' : 'TEST',
        currency,
        donor: this.donor(this.people.someone()),
        positions,
        payment: { transaction_id: payment.transactionId, method, status: method === 'INV' ? 'pending' : 'completed' },
      },
    });
    if (kind === 'recurring-start') this.recurringStarts.push(payment);
    this.maybeReconcile(payment);
  }

  private followUp(): void {
    const start = this.random.pick(this.recurringStarts);
    const payment = { ...start, transactionId: this.transactionId() };
    this.steps.push({ kind: 'recurring-follow-up', startedBy: start.transactionId, body: { payment: { transaction_id: payment.transactionId } } });
    this.maybeReconcile(payment);
  }

  private signUp(): void {
    const { random, people, steps } = this;
    // Donors who ticked the box sign up through the donation form; others through a form or a partner's API.
    const donorSigningUp = people.count > 0 && random.chance(0.4);
    const person = donorSigningUp ? people.pickKnown() : people.newPerson();
    if (this.signedUp.includes(person.email)) return;
    this.signedUp.push(person.email);
    const named = donorSigningUp || random.chance(0.7);
    steps.push({
      kind: 'newsletter-sign-up',
      body: {
        email: person.email,
        language: person.place.language,
        channel: donorSigningUp ? 'donation_form' : random.weighted({ form: 3, api: 1 } as const),
        ...(named && { gender: person.gender, first_name: person.first_name, last_name: person.last_name }),
      },
    });
    // Most people click the link in the confirmation mail; a few click it twice.
    if (random.chance(0.75)) {
      const clickAt = steps.length + random.int(1, 15);
      this.deferred.push({ dueAt: clickAt, step: { kind: 'newsletter-confirmation', email: person.email } });
      if (random.chance(0.05)) this.deferred.push({ dueAt: clickAt + 1, step: { kind: 'newsletter-confirmation', email: person.email } });
    }
  }

  private shopOrder(): void {
    const random = this.random;
    const customer = this.people.someone();
    const { items, vatMinor, discountMinor } = this.shopItems();
    const shipping = random.pick(SHIPPING_METHODS);
    const itemsMinor = items.reduce((sum, item) => sum + Math.round(item.total_price_gross * 100), 0);
    const method = random.weighted({ PAYPAL: 30, TWI: 30, VIS: 20, ECA: 10, INV: 10 });
    this.repeatable.push(this.steps.length);
    this.steps.push({
      kind: 'shop-order',
      body: {
        environment: random.chance(0.9) ? 'PRODUCTION' : 'TEST',
        customer_type: random.chance(0.6) ? 'registered' : 'guest',
        customer: { ...address(customer), gender: customer.gender, email: customer.email, phone: customer.phone, language: customer.place.language },
        invoice_address: address(customer),
        // A gift now and then: delivered to someone else.
        ...(random.chance(0.15) && { delivery_address: address(this.people.newPerson()) }),
        items,
        currency: 'CHF',
        total_price_gross: toAmount(itemsMinor + Math.round(shipping.cost * 100)),
        total_vat: toAmount(vatMinor),
        total_discount: toAmount(discountMinor),
        payment: { transaction_id: this.transactionId(), method, status: method === 'INV' ? 'pending' : 'completed' },
        shipping: { ...shipping },
      },
    });
  }

  /** One to three different articles, some discounted, with the VAT and discount they add up to. */
  private shopItems() {
    const random = this.random;
    const shelf = [...SHOP_ARTICLES];
    const articles = Array.from({ length: random.int(1, 3) }, () => shelf.splice(random.int(0, shelf.length - 1), 1)[0]);
    let vatMinor = 0;
    let discountMinor = 0;
    const items = articles.map((article) => {
      const quantity = random.int(1, 3);
      const discount_percentage = random.chance(0.15) ? 10 : 0;
      const grossMinor = Math.round(article.unit_price_gross * 100);
      const netMinor = Math.round(article.unit_price_net * 100);
      const fullMinor = quantity * grossMinor;
      const lineMinor = Math.round((fullMinor * (100 - discount_percentage)) / 100);
      discountMinor += fullMinor - lineMinor;
      vatMinor += Math.round((lineMinor * (grossMinor - netMinor)) / grossMinor);
      return { ...article, quantity, discount_percentage, total_price_gross: toAmount(lineMinor) };
    });
    return { items, vatMinor, discountMinor };
  }
}
