import type { Knex } from 'knex';
import { renderEnvelope } from '../webhooks/envelope';
import { findEndpoint } from '../webhook-endpoint/endpoint-store';
import { insertEvent, reserveEventId } from './outbox';
import type { WebhookEventType } from '../webhooks/event-types';
import { type PayloadVersion, payloadFeatures } from '../webhooks/payload-versions';
import { sampleEventData } from '../webhooks/payloads/samples';

/** Every test event carries this envelope environment: a subscriber that sets test data apart does so with these too. */
export const TEST_EVENT_ENVIRONMENT = 'test';

export type TestEventResult =
  | { kind: 'created'; id: number; payloadVersion: PayloadVersion; workflowId: string }
  | { kind: 'no-endpoint' }
  | { kind: 'endpoint-inactive' };

/**
 * Records a test event ("Testereignis senden"): sample data of the chosen type in the endpoint's payload version,
 * as its own event (status waiting, marked `test`), which the outbox relay hands to the delivery workflow like any
 * other: the same attempts, signature and Basic auth. Its envelope is the published one, with environment `test`;
 * what marks it as a test beyond that is the header `webhook-test: 1` the attempt adds. Any event type may be tested,
 * selected for the endpoint or not; an endpoint switched off receives nothing, so it is refused.
 */
export async function recordTestEvent(db: Knex, event: WebhookEventType, now: Date): Promise<TestEventResult> {
  return db.transaction(async (trx) => {
    const endpoint = await findEndpoint(trx);
    if (!endpoint) return { kind: 'no-endpoint' };
    if (!endpoint.active) return { kind: 'endpoint-inactive' };
    const id = await reserveEventId(trx);
    const createdAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
    const rendered = sampleEventData(event, payloadFeatures(endpoint.payload_version), id, createdAt);
    const payload = renderEnvelope({ id, event, createdAt, environment: TEST_EVENT_ENVIRONMENT, rendered });
    const inserted = await insertEvent(trx, {
      id,
      endpoint_id: endpoint.id,
      event_type: event,
      payload_version: endpoint.payload_version,
      source_key: `test:${id}`,
      payload,
      created_at: createdAt,
      test: true,
    });
    // `test:<id>` is new, so the insert always writes.
    return { kind: 'created', id, payloadVersion: endpoint.payload_version, workflowId: inserted!.workflowId };
  });
}
