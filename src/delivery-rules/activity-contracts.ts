import type { AttemptKind, AttemptOutcome, DeliveryStatus, FinishedAttempt } from './delivery-status';
import type { DeliveryOwner } from './event-identity';
import type { RecoveryOutcome, RecoveryParameters } from './recovery';

/*
 * The activities the workflows call, and what goes in and out of them: declared here, where the workflows import
 * their types from, and implemented in activities/ (each factory declares that it returns its interface). Everything
 * here crosses workflow history as JSON: times as epoch milliseconds or ISO text, never a Date; no response bodies.
 */

// --- Delivery (workflows/delivery.ts; activities/delivery-activities.ts) ---

/** An attempt as workflow history and the status rows describe it; its response body lives only in Postgres. */
export interface AttemptResult {
  outcome: AttemptOutcome;
  responseCode: number | null;
  error: string | null;
  startedAtMs: number;
  durationMs: number;
}

export interface AttemptRequest {
  eventId: number;
  /** Row number in webhook_delivery_attempts: 1, 2, … over scheduled and manual attempts alike; the workflow counts. */
  attemptNumber: number;
  attempt: AttemptKind;
  /**
   * For a scheduled attempt, the schedule's pause before the next one should this one fail (null after the last);
   * the next attempt is recorded as due that long after this one's outcome. Unused for a manual attempt.
   */
  retryDelayMs: number | null;
  /**
   * Whose event the workflow was started for (workflows started since migration 020): the activity sends and records
   * nothing for a workflow of another installation or event. Absent in workflows an earlier release started.
   */
  owner?: DeliveryOwner;
}

/** Where the delivery stands once an attempt is recorded, as the workflow needs it. */
export interface RecordedState {
  status: DeliveryStatus;
  nextAttemptAtMs: number | null;
  /** How long from the end of this activity until the next scheduled attempt is due; null when none is. */
  retryInMs: number | null;
}

/**
 * What one attempt produced, as workflow history keeps it: outcome, status code, error and timing, never the
 * response body (which stays in Postgres). A failed delivery is a normal result, not an exception.
 */
export interface AttemptReport extends AttemptResult {
  /** The delivery after this attempt; null when Postgres failed right after the POST, and recordAttempt must write it. */
  recorded: RecordedState | null;
}

/** Where a delivery stands in Postgres, for a workflow that resends after the delivery workflow ended. */
export interface RecordedProgress {
  status: DeliveryStatus;
  attempts: number;
  /** Number of the last manual attempt (0: none): the last one that answered a resend request. */
  lastManualAttempt: number;
}

/** Where a delivery stands in Postgres, with its schedule (a resumed delivery goes on with it). */
export interface RecordedSchedule extends RecordedProgress {
  /** Scheduled attempts made (manual ones not counted). */
  scheduledAttempts: number;
  /** How long until the next scheduled attempt is due (0 when overdue); null when none is. */
  retryInMs: number | null;
}

export interface RecordRequest extends AttemptRequest {
  attempt: FinishedAttempt;
  result: AttemptResult;
}

/** The delivery activities: they own all I/O (Postgres, HTTP); the workflow owns the schedule. */
export interface DeliveryActivities {
  /** One delivery attempt: POSTs the stored payload once and records the outcome with the event's new status. */
  attemptDelivery: (request: AttemptRequest) => Promise<AttemptReport>;
  /** Records an attempt whose outcome attemptDelivery could not write (Postgres failed right after the POST). */
  recordAttempt: (request: RecordRequest) => Promise<RecordedState>;
  /** Where an event's delivery stands, for a resend after its delivery workflow ended or a delivery resumed. */
  readRecordedProgress: (eventId: number) => Promise<RecordedSchedule>;
}

// --- Retention (workflows/purge-events.ts; activities/retention-activities.ts) ---

/** One batch of the purge, as the workflow asks for it (times as ISO text: activity input is JSON). */
export interface RetentionBatchRequest {
  /** Ended events created before this are due. */
  createdBefore: string;
  limit: number;
  /** Ids passed over before because their workflow was running; the batch does not look at them again. */
  passedOver: number[];
}

export interface RetentionBatchResult {
  /** Events deleted, or whose payload was dropped. */
  events: number;
  /** Attempt rows deleted with their events. */
  attempts: number;
  /** Due events passed over because their workflow runs; they are due again at the next purge. */
  passedOver: number[];
  /** Fewer due rows than the limit were found: nothing more is due. */
  done: boolean;
}

/** The purge's activities: each handles one batch of ended events in one transaction. */
export interface RetentionActivities {
  deleteEndedEventsBatch: (request: RetentionBatchRequest) => Promise<RetentionBatchResult>;
  dropEndedPayloadsBatch: (request: RetentionBatchRequest) => Promise<RetentionBatchResult>;
}

// --- Bulk recovery (workflows/recover-deliveries.ts; activities/recovery-activities.ts) ---

/** A resend requested for the recovery, and the attempts the request saw (it is answered by a later one). */
export type RecoveryRequest = { kind: 'requested'; seenAttempts: number } | { kind: 'skipped' };

/** The recovery's activities: reading which events to resend, resending one, and waiting for its attempt. */
export interface RecoveryActivities {
  countRecoverableEvents: (parameters: RecoveryParameters) => Promise<number>;
  listRecoverableEventIds: (request: RecoveryParameters & { afterId: number; limit: number }) => Promise<number[]>;
  requestRecoveryResend: (eventId: number) => Promise<RecoveryRequest>;
  awaitRecoveryAttempt: (request: { eventId: number; seenAttempts: number }) => Promise<Exclude<RecoveryOutcome, 'skipped'>>;
}
