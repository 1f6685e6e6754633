import { type ServiceClient, ServiceUnreachableError } from './service-client';
import { STEP_KINDS, type StepKind, type TrafficStep } from './traffic-plan';

/**
 * Sends a traffic plan to the service's platform API one call after the other, at a steady rate and within a time
 * limit, filling in the numbers the service handed out to earlier calls, and counts what came back.
 */

export type StepResult = 'created' | 'duplicate' | 'skipped' | 'error';

export interface KindTally {
  created: number;
  duplicates: number;
  skipped: number;
  errors: number;
}

export interface TrafficSummary {
  planned: number;
  sent: number;
  created: number;
  /** Answered 200: the call had been recorded before (idempotency at work). */
  duplicates: number;
  /** Not sent because the call it depends on failed. */
  skipped: number;
  /** Error answers by HTTP status. */
  errors: Record<string, number>;
  byKind: Record<StepKind, KindTally>;
  /** Why the run ended before its last step. */
  stopped?: 'time-limit' | 'interrupted' | 'unreachable';
  elapsedMs: number;
}

export interface TrafficRunOptions {
  client: Pick<ServiceClient, 'request'>;
  steps: readonly TrafficStep[];
  /** Calls per second at most. */
  ratePerSecond: number;
  maxDurationMs: number;
  signal?: AbortSignal;
  onStep?: (result: StepResult, summary: TrafficSummary) => void;
  nowMs?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface PlatformCall {
  path: string;
  body?: unknown;
}

const PAYMENT_KINDS: ReadonlySet<StepKind> = new Set(['single-donation', 'multi-checkout', 'recurring-start', 'recurring-follow-up']);
const TALLY_FIELDS = { created: 'created', duplicate: 'duplicates', skipped: 'skipped', error: 'errors' } as const satisfies Record<
  StepResult,
  keyof KindTally
>;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function emptySummary(planned: number): TrafficSummary {
  const byKind = Object.fromEntries(
    STEP_KINDS.map((kind) => [kind, { created: 0, duplicates: 0, skipped: 0, errors: 0 }]),
  ) as Record<StepKind, KindTally>;
  return { planned, sent: 0, created: 0, duplicates: 0, skipped: 0, errors: {}, byKind, elapsedMs: 0 };
}

export async function runTraffic(options: TrafficRunOptions): Promise<TrafficSummary> {
  const nowMs = options.nowMs ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const started = nowMs();
  const summary = emptySummary(options.steps.length);
  /** What the service handed out: recurring donation ids by first payment, sign-up ids by e-mail. */
  const recurringIds = new Map<string, number>();
  const subscriptionIds = new Map<string, number>();
  const recordedPayments = new Set<string>();
  /** The call each step made, when it was answered with success, so that a repeat can make it again. */
  const succeeded = new Map<number, PlatformCall>();

  function callFor(step: TrafficStep): PlatformCall | undefined {
    switch (step.kind) {
      case 'single-donation':
      case 'multi-checkout':
      case 'recurring-start':
        return { path: '/platform/checkouts', body: step.body };
      case 'recurring-follow-up': {
        const recurringId = recurringIds.get(step.startedBy);
        return recurringId === undefined ? undefined : { path: '/platform/recurring-payments', body: { ...step.body, recurring_id: recurringId } };
      }
      case 'reconciliation':
        return recordedPayments.has(step.body.transaction_id) ? { path: '/platform/reconciliations', body: step.body } : undefined;
      case 'newsletter-sign-up':
        return { path: '/platform/newsletter-subscriptions', body: step.body };
      case 'newsletter-confirmation': {
        const id = subscriptionIds.get(step.email);
        return id === undefined ? undefined : { path: `/platform/newsletter-subscriptions/${id}/confirm` };
      }
      case 'shop-order':
        return { path: '/platform/shop-orders', body: step.body };
      case 'repeat':
        return succeeded.get(step.of);
    }
  }

  function remember(step: TrafficStep, answer: any): void {
    if (PAYMENT_KINDS.has(step.kind)) recordedPayments.add(answer.transaction_id);
    if (step.kind === 'recurring-start') recurringIds.set(step.body.payment.transaction_id, answer.donations[0].recurring_id);
    if (step.kind === 'newsletter-sign-up') subscriptionIds.set(step.body.email, answer.subscription_id);
  }

  function tally(kind: StepKind, result: StepResult, status?: number): void {
    const field = TALLY_FIELDS[result];
    summary.byKind[kind][field] += 1;
    if (field === 'errors') summary.errors[String(status)] = (summary.errors[String(status)] ?? 0) + 1;
    else summary[field] += 1;
    summary.elapsedMs = nowMs() - started;
    options.onStep?.(result, summary);
  }

  for (const [index, step] of options.steps.entries()) {
    if (options.signal?.aborted) {
      summary.stopped = 'interrupted';
      break;
    }
    const dueAt = started + (index * 1000) / options.ratePerSecond;
    if (dueAt >= started + options.maxDurationMs) {
      summary.stopped = 'time-limit';
      break;
    }
    const wait = dueAt - nowMs();
    if (wait > 0) await sleep(wait);
    if (nowMs() >= started + options.maxDurationMs) {
      summary.stopped = 'time-limit';
      break;
    }
    const call = callFor(step);
    if (!call) {
      tally(step.kind, 'skipped');
      continue;
    }
    let answer;
    try {
      answer = await options.client.request('POST', call.path, call.body);
    } catch (err) {
      if (!(err instanceof ServiceUnreachableError)) throw err;
      summary.stopped = 'unreachable';
      break;
    }
    summary.sent += 1;
    if (answer.status === 201 || answer.status === 200) {
      succeeded.set(index, call);
      remember(step, answer.body);
      tally(step.kind, answer.status === 201 ? 'created' : 'duplicate');
    } else {
      tally(step.kind, 'error', answer.status);
    }
  }
  summary.elapsedMs = nowMs() - started;
  return summary;
}
