import { MAX_ATTEMPTS } from './retry-schedule';

/** The spec's four statuses of an event, as stored in `webhook_events.status`. */
export const DELIVERY_STATUSES = ['waiting', 'delivered', 'failed', 'max_retries_reached'] as const;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The labels the admin shows, as the spec names them. */
export const DELIVERY_STATUS_LABELS: Readonly<Record<DeliveryStatus, string>> = {
  waiting: 'Wartend',
  delivered: 'Zugestellt',
  failed: 'Fehlgeschlagen',
  max_retries_reached: 'Maximale Wiederholungen erreicht',
};

export type AttemptOutcome = 'delivered' | 'failed';

/**
 * Which attempt it is. Scheduled attempts are the five of the retry schedule (`number` 1 to 5); manual attempts
 * are requested by an operator ("resend") and never count towards the five.
 */
export type AttemptKind = { kind: 'scheduled'; number: number } | { kind: 'manual' };

/** One finished attempt. */
export type FinishedAttempt = AttemptKind & { outcome: AttemptOutcome };

/**
 * The spec's state table: any 2xx delivers; a failed scheduled attempt leaves the event failed (next attempt
 * scheduled) or, when it was the fifth, at max retries reached. Delivered and max retries reached are final for
 * failures, and a failed manual attempt never moves an event towards max retries: the schedule goes on unchanged.
 */
export function statusAfterAttempt(current: DeliveryStatus, attempt: FinishedAttempt): DeliveryStatus {
  if (attempt.outcome === 'delivered') return 'delivered';
  if (current === 'delivered' || current === 'max_retries_reached') return current;
  if (attempt.kind === 'manual') return 'failed';
  return attempt.number >= MAX_ATTEMPTS ? 'max_retries_reached' : 'failed';
}
