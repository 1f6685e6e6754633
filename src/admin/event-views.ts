import type { Knex } from 'knex';
import { formatTimestamp } from '../shared/time';
import { DELIVERY_STATUS_LABELS } from '../delivery-rules/delivery-status';
import { isStuck, stuckCutoff } from '../delivery-rules/stuck-events';
import { type AttemptLogRow, type EventFilters, type EventSummaryRow, findEventWithAttempts, listEvents } from '../webhook-events/admin-queries';
import { offsetOf, type PageRequest } from '../http/pagination';

const utc = (instant: Date | null) => instant && formatTimestamp(instant, 'utc');

/** When the events are looked at, and after how many minutes without progress an event counts as stuck. */
export interface StuckView {
  now: Date;
  stuckAfterMinutes: number;
}

function presentEvent(row: EventSummaryRow, view: StuckView) {
  const facts = { status: row.status, attempts: row.attempts, createdAt: row.created_at, workflowStartedAt: row.workflow_started_at, nextAttemptAt: row.next_attempt_at };
  return {
    id: row.id,
    event: row.event_type,
    created_at: utc(row.created_at),
    status: row.status,
    status_label: DELIVERY_STATUS_LABELS[row.status],
    attempts: row.attempts,
    interrupted_attempts: row.interrupted_attempts,
    last_response_code: row.last_response_code,
    last_response_body: row.last_response_body,
    next_attempt_at: utc(row.next_attempt_at),
    delivered_at: utc(row.delivered_at),
    test: row.test,
    stuck: isStuck(facts, view.now, view.stuckAfterMinutes),
  };
}

function presentAttempt(row: AttemptLogRow) {
  return {
    number: row.number,
    manual: row.manual,
    started_at: utc(row.started_at),
    duration_ms: row.duration_ms,
    outcome: row.outcome,
    interrupted: row.interrupted,
    response_code: row.response_code,
    response_body: row.response_body,
    error: row.error,
  };
}

/** Newest first, filtered and searched; `onlyStuck`: only the events stuck now. */
export async function listWebhookEvents(db: Knex, filters: EventFilters & { onlyStuck?: boolean }, page: PageRequest, view: StuckView) {
  const { onlyStuck, ...rest } = filters;
  const stuckBefore = onlyStuck ? stuckCutoff(view.now, view.stuckAfterMinutes) : undefined;
  const { count, rows } = await listEvents(db, { ...rest, stuckBefore }, { limit: page.page_size, offset: offsetOf(page) });
  return { count, results: rows.map((row) => presentEvent(row, view)) };
}

/** The payload, or null with the time retention dropped it. */
function presentPayload(payload: string, droppedAt: Date | null) {
  if (droppedAt) return { payload: null, payload_is_json: false, payload_dropped_at: utc(droppedAt) };
  return { ...parsedPayload(payload), payload_dropped_at: null };
}

/**
 * The stored payload as sent: parsed when it is JSON (always, for events this service rendered), otherwise the text
 * itself, so that a row written by hand or damaged still shows instead of failing the page.
 */
function parsedPayload(payload: string): { payload: unknown; payload_is_json: boolean } {
  try {
    return { payload: JSON.parse(payload) as unknown, payload_is_json: true };
  } catch {
    return { payload, payload_is_json: false };
  }
}

/**
 * One event with the payload it was rendered with, every delivery attempt and its delivery workflow's id (for the
 * Temporal UI); undefined when unknown.
 */
export async function findWebhookEvent(db: Knex, id: number, view: StuckView) {
  const found = await findEventWithAttempts(db, id);
  if (!found) return undefined;
  const { event, attempts } = found;
  const interrupted = attempts.filter((attempt) => attempt.interrupted).length;
  return {
    ...presentEvent({ ...event, interrupted_attempts: interrupted }, view),
    payload_version: event.payload_version,
    workflow_id: event.workflow_id,
    last_error: event.last_error,
    ...presentPayload(event.payload, event.payload_dropped_at),
    delivery_attempts: attempts.map(presentAttempt),
  };
}
