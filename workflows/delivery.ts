import {
  condition,
  defineQuery,
  defineSignal,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { DeliveryActivities, RecordedProgress, RecordedSchedule, RecordedState } from '../src/delivery-rules/activity-contracts';
import type { AttemptKind, DeliveryStatus } from '../src/delivery-rules/delivery-status';
import {
  type AttemptInBrief,
  attemptingDetails,
  attemptSummary,
  backoffSummary,
  recordedDetails,
} from '../src/delivery-rules/delivery-texts';
import type { DeliveryOwner } from '../src/delivery-rules/event-identity';
import { type ResendRequest, ResendRequests } from '../src/delivery-rules/resend-requests';
import { delayAfterFailedAttempt } from '../src/delivery-rules/retry-schedule';
import { WEBHOOK_ATTEMPTS, WEBHOOK_STATUS } from '../src/delivery-rules/search-attributes';

// Local activities: an attempt runs inside the workflow task that asked for it, and its result is kept in history
// when that task completes. Against ordinary activities this saves Temporal an activity task, a second workflow task
// and their matching per event: 40 % of the server's CPU per delivery, +37 % deliveries per second on the benchmark
// machine (BENCHMARKS.md, part 1). A worker that dies mid-attempt (kill -9) is noticed by the workflow task timeout
// (10 s, set at start) and the attempt runs again on another worker; attemptDelivery never re-sends an attempt it
// already recorded.
const ATTEMPT_OPTIONS = {
  // Room for the 30 s HTTP limit plus reading and recording the event: the upper bound of one activity execution.
  startToCloseTimeout: '2 minutes',
  // No maximumAttempts: an infrastructure error (database down, worker lost) is retried until it passes and never
  // counts as one of the five delivery attempts, which are a workflow-level loop.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
} as const;
const { attemptDelivery, recordAttempt, readRecordedProgress } = proxyLocalActivities<DeliveryActivities>(ATTEMPT_OPTIONS);

/** "Resend now": answered by the next attempt that starts, unless the event is delivered by then. */
export const resendSignal = defineSignal<[ResendRequest]>('resend');

export interface DeliveryState {
  status: DeliveryStatus;
  attempts: number;
  /** ISO time of the next scheduled attempt, while one is due. */
  nextAttemptAt: string | null;
}

export const deliveryStateQuery = defineQuery<DeliveryState>('deliveryState');

/**
 * One event's delivery inside a workflow: it numbers the attempts, keeps the status each recorded attempt left,
 * answers resend requests and the deliveryState query, and tells Temporal UI where it stands (current details in
 * the admin page's words, the search attributes WebhookStatus and WebhookAttempts) after every transition.
 */
export class Delivery {
  status: DeliveryStatus;
  private attempts: number;
  private nextAttemptAtMs: number | null = null;
  private lastAttempt: AttemptInBrief | undefined;
  private readonly resendRequests: ResendRequests;

  /**
   * `start`: nothing yet for a new event; what Postgres recorded for a resend. `owner`: whose event it is, handed to
   * every attempt, which checks it (absent in workflows an earlier release started).
   */
  constructor(
    private readonly eventId: number,
    start: RecordedProgress,
    private readonly owner?: DeliveryOwner,
  ) {
    this.status = start.status;
    this.attempts = start.attempts;
    this.resendRequests = new ResendRequests(start.lastManualAttempt);
    setHandler(resendSignal, (request) => this.resendRequests.receive(request));
    setHandler(deliveryStateQuery, () => ({
      status: this.status,
      attempts: this.attempts,
      nextAttemptAt: this.nextAttemptAtMs === null ? null : new Date(this.nextAttemptAtMs).toISOString(),
    }));
  }

  /**
   * Makes the next attempt and records it. `retryDelayMs`: for a scheduled attempt, the schedule's pause should it
   * fail. Answers how long until the next scheduled attempt is due, if one is.
   */
  async attempt(attempt: AttemptKind, retryDelayMs: number | null = null): Promise<number | null> {
    const request = { eventId: this.eventId, attemptNumber: ++this.attempts, attempt, retryDelayMs, owner: this.owner };
    this.resendRequests.attemptStarted(request.attemptNumber);
    setCurrentDetails(attemptingDetails(this.status, request.attemptNumber, attempt));
    const summary = attemptSummary(request.attemptNumber, attempt);
    const { recorded: recordedByAttempt, ...result } = await attemptDelivery.executeWithOptions({ ...ATTEMPT_OPTIONS, summary }, [request]);
    // Postgres failed right after the POST: the outcome waits in history until it can be written, never re-sent.
    const recorded: RecordedState =
      recordedByAttempt ??
      (await recordAttempt.executeWithOptions({ ...ATTEMPT_OPTIONS, summary: `Record ${summary}` }, [
        { ...request, attempt: { ...attempt, outcome: result.outcome }, result },
      ]));
    this.status = recorded.status;
    this.nextAttemptAtMs = recorded.nextAttemptAtMs;
    this.lastAttempt = { ...result, attemptNumber: request.attemptNumber, attempt };
    upsertSearchAttributes([
      { key: WEBHOOK_STATUS, value: this.status },
      { key: WEBHOOK_ATTEMPTS, value: this.attempts },
    ]);
    setCurrentDetails(recordedDetails(this.status, this.lastAttempt, this.nextAttemptAtMs));
    return recorded.retryInMs;
  }

  /**
   * Waits `ms` for the next scheduled attempt, making a manual attempt for each resend request meanwhile; the
   * schedule keeps running through them. Ends early when one of them delivers.
   */
  async waitForScheduledAttempt(ms: number): Promise<void> {
    const summary = this.lastAttempt && this.nextAttemptAtMs !== null ? backoffSummary(this.lastAttempt, this.nextAttemptAtMs) : undefined;
    const due = sleep(ms, { summary }).then(() => true);
    while (this.status !== 'delivered') {
      const requested = condition(() => this.resendRequests.pending).then(() => false);
      if (await Promise.race([due, requested])) return;
      await this.attempt({ kind: 'manual' });
    }
  }

  /**
   * The schedule from scheduled attempt `first` on: each attempt, then the pause after it while the event is failed,
   * until it is delivered or at max retries reached; a request that came in during the last attempt is answered
   * before the end, not lost with the ending workflow. Answers the status it ends with.
   */
  async keepToSchedule(first: number): Promise<DeliveryStatus> {
    for (let scheduled = first; this.status === 'waiting' || this.status === 'failed'; scheduled++) {
      const retryInMs = await this.attempt({ kind: 'scheduled', number: scheduled }, delayAfterFailedAttempt(scheduled) ?? null);
      if (this.status === 'failed' && retryInMs !== null) await this.waitForScheduledAttempt(retryInMs);
    }
    // Called only when a request waits: on the happy path its promise (and the stack trace the SDK records for it) is
    // for nothing.
    if (this.resendRequests.pending) await this.answerResendRequests();
    return this.status;
  }

  /** Makes manual attempts while resend requests wait, until the event is delivered. */
  async answerResendRequests(): Promise<void> {
    while (this.resendRequests.pending && this.status !== 'delivered') await this.attempt({ kind: 'manual' });
  }

  /** For a resend after the delivery workflow ended: where Postgres says the delivery stands. */
  static async resume(eventId: number, owner?: DeliveryOwner): Promise<Delivery> {
    return (await Delivery.resumeSchedule(eventId, owner)).delivery;
  }

  /**
   * Where Postgres says the delivery stands, with its schedule: how many scheduled attempts were made, and how long
   * until the next one is due (null: none is).
   */
  static async resumeSchedule(eventId: number, owner?: DeliveryOwner): Promise<{ delivery: Delivery } & Pick<RecordedSchedule, 'scheduledAttempts' | 'retryInMs'>> {
    const recorded = await readRecordedProgress.executeWithOptions({ ...ATTEMPT_OPTIONS, summary: 'Read the attempts recorded so far' }, [eventId]);
    return { delivery: new Delivery(eventId, recorded, owner), scheduledAttempts: recorded.scheduledAttempts, retryInMs: recorded.retryInMs };
  }
}
