import { type AttemptKind, DELIVERY_STATUS_LABELS, type DeliveryStatus } from './delivery-status';
import { MAX_ATTEMPTS } from './retry-schedule';
import { swissClock } from './swiss-clock';

/** What a delivery is about, fixed when its workflow starts: Temporal UI shows it as the workflow's summary and details. */
export interface DeliveryFacts {
  eventId: number;
  eventType: string;
  payloadVersion: string;
  /** Host (and port) of the endpoint's URL when the delivery starts. */
  subscriberHost: string;
  /** The payment's transaction id, when the payload has one. */
  transactionId: string | null;
  /** The envelope's environment (prod, stage, test), when the payload says. */
  environment: string | null;
}

/** One finished attempt, as workflow history keeps it. */
export interface AttemptInBrief {
  attemptNumber: number;
  attempt: AttemptKind;
  responseCode: number | null;
  error: string | null;
  startedAtMs: number;
  durationMs: number;
}

const MAX_ERROR_LENGTH = 80;

/** Swiss local time, as the admin page shows it: 11:20; with the day (16.07. 01:20) when it is not the day of `sameDayAs`. */
function swissTime(ms: number, sameDayAs = ms): string {
  const { day, time } = swissClock(ms);
  return ms === sameDayAs || day === swissClock(sameDayAs).day ? time : `${day} ${time}`;
}

const shortened = (text: string) => (text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text);

/** "HTTP 500 in 83 ms", "HTTP 302: Redirect not followed (…) in 12 ms", "Connection error: … in 3 ms". */
function outcomeInBrief({ responseCode, error, durationMs }: AttemptInBrief): string {
  const what = responseCode === null ? shortened(error ?? 'no answer') : `HTTP ${responseCode}${error ? `: ${shortened(error)}` : ''}`;
  return `${what} in ${durationMs} ms`;
}

/** Which kind of run of an event's workflow: its delivery, a resend after it ended, or a delivery resumed after Temporal lost it. */
export type DeliveryRun = 'delivery' | 'resend' | 'resume';

const RUN_PREFIXES: Record<DeliveryRun, string> = { delivery: '', resend: 'Resend: ', resume: 'Resumed: ' };

/** The workflow's one-line summary: `donation.completed #1234 → crm.example.org`, `Resend: …`, `Resumed: …`. */
export function deliverySummary(facts: DeliveryFacts, run: DeliveryRun = 'delivery'): string {
  return `${RUN_PREFIXES[run]}${facts.eventType} #${facts.eventId} → ${facts.subscriberHost}`;
}

/** The workflow's details (Markdown in Temporal UI), one fact per line. */
export function deliveryDetails(facts: DeliveryFacts): string {
  return [
    `**Event:** ${facts.eventType}, id ${facts.eventId}`,
    `**Payload version:** ${facts.payloadVersion}`,
    `**Subscriber:** ${facts.subscriberHost}`,
    ...(facts.transactionId === null ? [] : [`**Transaction:** ${facts.transactionId}`]),
    ...(facts.environment === null ? [] : [`**Environment:** ${facts.environment}`]),
  ].join('\n');
}

/** Summary of an attempt's local activity, fixed when it is scheduled: `POST attempt 2 of 5`. */
export function attemptSummary(attemptNumber: number, attempt: AttemptKind): string {
  return attempt.kind === 'scheduled' ? `POST attempt ${attempt.number} of ${MAX_ATTEMPTS}` : `POST manual attempt (no. ${attemptNumber})`;
}

/** Summary of the backoff timer: when the next attempt is due, and after what. */
export function backoffSummary(last: AttemptInBrief, nextAttemptAtMs: number): string {
  return `Next attempt at ${swissTime(nextAttemptAtMs, last.startedAtMs)} (Zurich), after attempt ${last.attemptNumber} → ${outcomeInBrief(last)}`;
}

// Current details, in the admin page's words.

const attemptName = (attemptNumber: number, attempt: AttemptKind) =>
  attempt.kind === 'scheduled' ? `Versuch ${attempt.number} von ${MAX_ATTEMPTS}` : `manueller Versuch (Nr. ${attemptNumber})`;

/** While an attempt is being made: `Wartend — Versuch 1 von 5 läuft`. */
export function attemptingDetails(status: DeliveryStatus, attemptNumber: number, attempt: AttemptKind): string {
  return `${DELIVERY_STATUS_LABELS[status]} — ${attemptName(attemptNumber, attempt)} läuft`;
}

/** After an attempt: `Fehlgeschlagen — Versuch 2 von 5 um 11:20 (HTTP 500 in 83 ms), nächster Versuch um 11:35`. */
export function recordedDetails(status: DeliveryStatus, last: AttemptInBrief, nextAttemptAtMs: number | null): string {
  const next = nextAttemptAtMs === null ? '' : `, nächster Versuch um ${swissTime(nextAttemptAtMs, last.startedAtMs)}`;
  return `${DELIVERY_STATUS_LABELS[status]} — ${attemptName(last.attemptNumber, last.attempt)} um ${swissTime(last.startedAtMs)} (${outcomeInBrief(last)})${next}`;
}
