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

/** The answers later steps depend on: the numbers the service handed out, the payments it recorded, the calls that succeeded. */
class EarlierAnswers {
  /** Recurring donation ids by the transaction id of their first payment. */
  private readonly recurringIds = new Map<string, number>();
  /** Newsletter sign-up ids by e-mail. */
  private readonly subscriptionIds = new Map<string, number>();
  private readonly recordedPayments = new Set<string>();
  /** The call each step made, when it was answered with success, so that a repeat can make it again. */
  private readonly succeeded = new Map<number, PlatformCall>();

  /** The call a step makes; none when what it needs is missing (the call it depends on failed). */
  callFor(step: TrafficStep): PlatformCall | undefined {
    switch (step.kind) {
      case 'single-donation':
      case 'multi-checkout':
      case 'recurring-start':
        return { path: '/platform/checkouts', body: step.body };
      case 'recurring-follow-up': {
        const recurringId = this.recurringIds.get(step.startedBy);
        return recurringId === undefined ? undefined : { path: '/platform/recurring-payments', body: { ...step.body, recurring_id: recurringId } };
      }
      case 'reconciliation':
        return this.recordedPayments.has(step.body.transaction_id) ? { path: '/platform/reconciliations', body: step.body } : undefined;
      case 'newsletter-sign-up':
        return { path: '/platform/newsletter-subscriptions', body: step.body };
      case 'newsletter-confirmation': {
        const id = this.subscriptionIds.get(step.email);
        return id === undefined ? undefined : { path: `/platform/newsletter-subscriptions/${id}/confirm` };
      }
      case 'shop-order':
        return { path: '/platform/shop-orders', body: step.body };
      case 'repeat':
        return this.succeeded.get(step.of);
    }
  }

  /** A successful answer to the step at `index`, which made `call`. */
  remember(index: number, step: TrafficStep, call: PlatformCall, answer: any): void {
    this.succeeded.set(index, call);
    if (PAYMENT_KINDS.has(step.kind)) this.recordedPayments.add(answer.transaction_id);
    if (step.kind === 'recurring-start') this.recurringIds.set(step.body.payment.transaction_id, answer.donations[0].recurring_id);
    if (step.kind === 'newsletter-sign-up') this.subscriptionIds.set(step.body.email, answer.subscription_id);
  }
}

function countResult(summary: TrafficSummary, kind: StepKind, result: StepResult, status?: number): void {
  const field = TALLY_FIELDS[result];
  summary.byKind[kind][field] += 1;
  if (field === 'errors') summary.errors[String(status)] = (summary.errors[String(status)] ?? 0) + 1;
  else summary[field] += 1;
}

interface Pace {
  started: number;
  nowMs: () => number;
  sleep: (ms: number) => Promise<void>;
}

/** Waits until the step at `index` is due at the run's rate; why the run stops instead, when it must. */
async function awaitTurn(options: TrafficRunOptions, pace: Pace, index: number): Promise<TrafficSummary['stopped']> {
  if (options.signal?.aborted) return 'interrupted';
  const end = pace.started + options.maxDurationMs;
  const dueAt = pace.started + (index * 1000) / options.ratePerSecond;
  if (dueAt >= end) return 'time-limit';
  const wait = dueAt - pace.nowMs();
  if (wait > 0) await pace.sleep(wait);
  return pace.nowMs() >= end ? 'time-limit' : undefined;
}

export async function runTraffic(options: TrafficRunOptions): Promise<TrafficSummary> {
  const nowMs = options.nowMs ?? Date.now;
  const pace: Pace = { started: nowMs(), nowMs, sleep: options.sleep ?? realSleep };
  const summary = emptySummary(options.steps.length);
  const answers = new EarlierAnswers();
  const tally = (kind: StepKind, result: StepResult, status?: number) => {
    countResult(summary, kind, result, status);
    summary.elapsedMs = pace.nowMs() - pace.started;
    options.onStep?.(result, summary);
  };

  for (const [index, step] of options.steps.entries()) {
    const stopped = await awaitTurn(options, pace, index);
    if (stopped) {
      summary.stopped = stopped;
      break;
    }
    const call = answers.callFor(step);
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
      answers.remember(index, step, call, answer.body);
      tally(step.kind, answer.status === 201 ? 'created' : 'duplicate');
    } else {
      tally(step.kind, 'error', answer.status);
    }
  }
  summary.elapsedMs = pace.nowMs() - pace.started;
  return summary;
}
