import type { Knex } from 'knex';
import type { DeliveryStatus, WebhookDeliveryAttemptModel, WebhookEventModel } from '../db/models';
import { formatTimestamp } from '../shared/time';
import { deliveryWorkflowId } from '../temporal/delivery-workflows';
import type { WebhookEventType } from '../webhooks/event-types';
import { DELIVERY_STATUS_LABELS } from '../webhooks/delivery-status';
import { offsetOf, type PageRequest } from '../http/pagination';

export interface EventFilters {
  status?: DeliveryStatus;
  event?: WebhookEventType;
}

const utc = (instant: Date | null) => instant && formatTimestamp(instant, 'utc');

function presentEvent(row: WebhookEventModel) {
  return {
    id: row.id,
    event: row.event_type,
    created_at: utc(row.created_at),
    status: row.status,
    status_label: DELIVERY_STATUS_LABELS[row.status],
    attempts: row.attempts,
    last_response_code: row.last_response_code,
    last_response_body: row.last_response_body,
    next_attempt_at: utc(row.next_attempt_at),
    delivered_at: utc(row.delivered_at),
  };
}

function presentAttempt(row: WebhookDeliveryAttemptModel) {
  return {
    number: row.number,
    manual: row.manual,
    started_at: utc(row.started_at),
    duration_ms: row.duration_ms,
    outcome: row.outcome,
    response_code: row.response_code,
    response_body: row.response_body,
    error: row.error,
  };
}

const LIST_COLUMNS = [
  'id',
  'event_type',
  'created_at',
  'status',
  'attempts',
  'last_response_code',
  'last_response_body',
  'next_attempt_at',
  'delivered_at',
];

/** Newest first, optionally only one status and one event type. */
export async function listWebhookEvents(db: Knex, filters: EventFilters, page: PageRequest) {
  const filtered = () => {
    const query = db('webhook_events');
    if (filters.status) query.where('status', filters.status);
    if (filters.event) query.where('event_type', filters.event);
    return query;
  };
  const [{ count }] = await filtered().count<{ count: string }[]>({ count: '*' });
  const rows: WebhookEventModel[] = await filtered()
    .select(LIST_COLUMNS)
    .orderBy('id', 'desc')
    .limit(page.page_size)
    .offset(offsetOf(page));
  return { count: Number(count), results: rows.map(presentEvent) };
}

/**
 * One event with the payload it was rendered with, every delivery attempt and its delivery workflow's id (for the
 * Temporal UI); undefined when unknown.
 */
export async function findWebhookEvent(db: Knex, id: number) {
  const row: WebhookEventModel | undefined = await db('webhook_events').where({ id }).first();
  if (!row) return undefined;
  const attempts: WebhookDeliveryAttemptModel[] = await db('webhook_delivery_attempts')
    .where({ event_id: id })
    .orderBy('number');
  return {
    ...presentEvent(row),
    payload_version: row.payload_version,
    workflow_id: deliveryWorkflowId(row.id),
    last_error: row.last_error,
    payload: JSON.parse(row.payload) as unknown,
    delivery_attempts: attempts.map(presentAttempt),
  };
}
