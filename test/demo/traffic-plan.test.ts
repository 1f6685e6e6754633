import { createRandom } from '../../src/demo/random';
import { DEMO_CAMPAIGNS } from '../../src/demo/swiss-data';
import { planTraffic, STEP_KINDS, type TrafficStep } from '../../src/demo/traffic-plan';
import { checkoutInput } from '../../src/platform/record-checkout';
import { reconciliationInput } from '../../src/platform/record-reconciliation';
import { recurringPaymentInput } from '../../src/platform/record-recurring-payment';
import { shopOrderInput } from '../../src/platform/record-shop-order';
import { signUpInput } from '../../src/platform/sign-up-newsletter';
import { toMinor } from '../../src/shared/money';

const campaigns = DEMO_CAMPAIGNS.map(({ title }, index) => ({ id: index + 11, title }));
const plan = (seed: number, count = 200) => planTraffic({ seed, count, runId: 'r1', campaigns });
const SEEDS = Array.from({ length: 30 }, (_, index) => index * 7919 + 1);

const minor = (amount: number) => {
  const value = toMinor(amount);
  if (value === undefined) throw new Error(`${amount} is no amount`);
  return value;
};

test('the generator is reproducible: the same seed gives the same plan, another seed another', () => {
  expect(plan(42)).toEqual(plan(42));
  expect(plan(42)).not.toEqual(plan(43));
  expect(createRandom(7).next()).toBe(createRandom(7).next());
});

test('every body is accepted by the platform schema it is sent to', () => {
  for (const seed of SEEDS) {
    for (const step of plan(seed)) {
      const result = (() => {
        switch (step.kind) {
          case 'single-donation':
          case 'multi-checkout':
          case 'recurring-start':
            return checkoutInput.safeParse(step.body);
          case 'recurring-follow-up':
            return recurringPaymentInput.safeParse({ ...step.body, recurring_id: 1 });
          case 'reconciliation':
            return reconciliationInput.safeParse(step.body);
          case 'newsletter-sign-up':
            return signUpInput.safeParse(step.body);
          case 'shop-order':
            return shopOrderInput.safeParse(step.body);
          default:
            return { success: true as const };
        }
      })();
      if (!result.success) throw new Error(`seed ${seed}, ${step.kind}: ${JSON.stringify(result.error.issues)}\n${JSON.stringify(step)}`);
    }
  }
});

test('exactly the asked number of steps, with every kind of call in a long run', () => {
  for (const count of [1, 17, 200]) expect(plan(5, count)).toHaveLength(count);
  const kinds = new Set(plan(5, 1000).map((step) => step.kind));
  expect([...kinds].sort()).toEqual([...STEP_KINDS].sort());
  const reconciliations = plan(5, 1000).filter((step) => step.kind === 'reconciliation');
  expect(new Set(reconciliations.map((step) => step.timing))).toEqual(new Set(['immediate', 'later']));
});

test('a step only ever refers to an earlier one, and each payment is reconciled at most once with consistent amounts', () => {
  for (const seed of SEEDS) {
    const steps = plan(seed);
    const payments = new Map<string, { totalMinor: number; currency: string; method: string }>();
    const recurringStarts = new Map<string, { totalMinor: number; currency: string; method: string }>();
    const signedUp = new Set<string>();
    const reconciled = new Set<string>();
    const transactionIds = new Set<string>();
    steps.forEach((step: TrafficStep, index) => {
      switch (step.kind) {
        case 'single-donation':
        case 'multi-checkout':
        case 'recurring-start': {
          const { payment, positions, currency } = step.body;
          const totalMinor = positions.reduce((sum, position) => sum + minor(position.amount), 0);
          payments.set(payment.transaction_id, { totalMinor, currency, method: payment.method });
          if (step.kind === 'recurring-start') recurringStarts.set(payment.transaction_id, payments.get(payment.transaction_id)!);
          if (step.kind === 'multi-checkout') expect([2, 3]).toContain(positions.length);
          else expect(positions).toHaveLength(1);
          expect(transactionIds.has(payment.transaction_id)).toBe(false);
          transactionIds.add(payment.transaction_id);
          break;
        }
        case 'recurring-follow-up':
          expect(recurringStarts.has(step.startedBy)).toBe(true);
          payments.set(step.body.payment.transaction_id, recurringStarts.get(step.startedBy)!);
          transactionIds.add(step.body.payment.transaction_id);
          break;
        case 'reconciliation': {
          const payment = payments.get(step.body.transaction_id);
          expect(payment).toBeDefined();
          expect(['TWI', 'VIS', 'ECA']).toContain(payment!.method);
          expect(reconciled.has(step.body.transaction_id)).toBe(false);
          reconciled.add(step.body.transaction_id);
          const payoutMinor = minor(step.body.paid_out_amount) + minor(step.body.fee_amount);
          expect(payoutMinor).toBe(payment!.currency === 'CHF' ? payment!.totalMinor : Math.round(payment!.totalMinor * 0.94));
          break;
        }
        case 'newsletter-sign-up':
          expect(signedUp.has(step.body.email)).toBe(false);
          signedUp.add(step.body.email);
          break;
        case 'newsletter-confirmation':
          expect(signedUp.has(step.email)).toBe(true);
          break;
        case 'shop-order':
          expect(transactionIds.has(step.body.payment.transaction_id)).toBe(false);
          transactionIds.add(step.body.payment.transaction_id);
          break;
        case 'repeat':
          expect(step.of).toBeLessThan(index);
          expect(['single-donation', 'multi-checkout', 'recurring-start', 'shop-order']).toContain(steps[step.of].kind);
      }
    });
    for (const id of transactionIds) expect(id).toMatch(/^traffic-r1-\d{5}$/);
  }
});

test('only QR invoices are pending, and shop totals add up from their lines and shipping', () => {
  for (const step of plan(99, 1000)) {
    if ('body' in step && 'payment' in step.body && step.kind !== 'recurring-follow-up') {
      expect(step.body.payment.status).toBe(step.body.payment.method === 'INV' ? 'pending' : 'completed');
    }
    if (step.kind === 'shop-order') {
      const { items, shipping, total_price_gross } = step.body;
      const lines = items.reduce((sum, item) => sum + minor(item.total_price_gross), 0);
      expect(minor(total_price_gross)).toBe(lines + minor(shipping.cost));
    }
  }
});

test('a returning donor keeps name and e-mail together; without campaigns donations go to none', () => {
  const names = new Map<string, string>();
  for (const step of plan(3, 1000)) {
    const person = 'body' in step && ('donor' in step.body ? step.body.donor : 'customer' in step.body ? step.body.customer : undefined);
    if (!person) continue;
    const name = `${person.first_name} ${person.last_name}`;
    expect(names.get(person.email) ?? name).toBe(name);
    names.set(person.email, name);
  }
  expect(names.size).toBeGreaterThan(100);
  const withoutCampaigns = planTraffic({ seed: 3, count: 300, runId: 'r1', campaigns: [] });
  for (const step of withoutCampaigns) {
    if ('body' in step && 'positions' in step.body) {
      for (const position of step.body.positions) expect(position.campaign_id).toBeNull();
    }
  }
});
