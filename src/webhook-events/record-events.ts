import type { Knex } from 'knex';
import { type EnvelopeEnvironment, renderEnvelope } from '../webhooks/envelope';
import { findEndpoint } from '../webhook-endpoint/endpoint-store';
import { insertEvent, reserveEventId } from './outbox';
import type { WebhookEventType } from '../webhooks/event-types';
import { type PayloadFeatures, payloadFeatures } from '../webhooks/payload-versions';
import type { RenderedEvent } from '../webhooks/payloads/rendered';

export interface EventCause {
  type: WebhookEventType;
  environment: EnvelopeEnvironment;
  occurredAt: Date;
  /** Renders the `data` of each event for the endpoint's payload version (several for a multi-checkout on v1/v2). */
  render(features: PayloadFeatures): RenderedEvent[];
}

/**
 * Writes the webhook events of one cause inside the caller's transaction, so that they exist exactly when the
 * domain rows do (the outbox). Nothing is written unless the endpoint is active and subscribed to the event type.
 * The payload is rendered here, once, with the row's id as envelope id; `source_key` makes a repeat a no-op.
 * Returns the ids of the events created.
 */
export async function recordWebhookEvents(trx: Knex.Transaction, cause: EventCause): Promise<number[]> {
  const endpoint = await findEndpoint(trx);
  if (!endpoint || !endpoint.active || !endpoint.events.includes(cause.type)) return [];

  const created: number[] = [];
  for (const { key, data } of cause.render(payloadFeatures(endpoint.payload_version))) {
    // The id is reserved first because the envelope, rendered before the insert, carries it.
    const id = await reserveEventId(trx);
    const payload = renderEnvelope({ id, event: cause.type, createdAt: cause.occurredAt, environment: cause.environment, data });
    const inserted = await insertEvent(trx, {
      id,
      endpoint_id: endpoint.id,
      event_type: cause.type,
      payload_version: endpoint.payload_version,
      source_key: `${cause.type}:${key}`,
      payload,
      created_at: cause.occurredAt,
    });
    if (inserted) created.push(id);
  }
  return created;
}
