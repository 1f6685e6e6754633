import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/knex';
import { createKeyring, generateSecretKey } from '../../src/secrets/keyring';
import type { WebhookEventType } from '../../src/webhooks/event-types';
import { sealEndpointSecrets } from '../../src/webhook-endpoint/endpoint-store';
import { presentedDonor } from './platform-donor';
import { insertEvent as writeEvent } from '../../src/webhook-events/outbox';

/** The key of the endpoints these helpers insert: give it to the activities that deliver their events. */
export const TEST_KEYRING = createKeyring([generateSecretKey()]);

export interface EndpointOptions {
  url: string;
  active?: boolean;
  basicAuth?: { username: string; password: string };
  signingSecret?: string;
}

/**
 * An endpoint row as the admin would configure it, secrets sealed under TEST_KEYRING (each on a platform of its own,
 * as there is one per platform).
 */
export async function insertEndpoint(db: Db, options: EndpointOptions): Promise<number> {
  const [row] = await db('webhook_endpoints')
    .insert({
      platform: `test-${randomUUID()}`,
      url: options.url,
      active: options.active ?? true,
      payload_version: 'v2.1',
      events: ['donation.completed', 'donation.recurring_completed', 'shop_order.completed', 'donation.reconciled'],
      basic_auth_username: options.basicAuth?.username ?? null,
      ...sealEndpointSecrets({ basic_auth_password: options.basicAuth?.password ?? null, signing_secret: options.signingSecret ?? null }, TEST_KEYRING),
    })
    .returning('id');
  return row.id;
}

/** A v2.1 envelope as the platform renders it: a single CHF donation paid by card. */
function donationEnvelope(id: number, eventType: string, transactionId: string): string {
  const reconciled = eventType === 'donation.reconciled';
  return JSON.stringify({
    id,
    event: eventType,
    created_at: '2025-07-15T10:30:00Z',
    environment: 'prod',
    data: {
      donation: {
        id: '100234',
        created_at: '2025-07-15T10:29:58Z',
        amount: 50.0,
        currency: 'CHF',
        campaign: { id: 12, title: 'Wasser für alle' },
        purpose: 'Brunnenbau',
        donor: { ...presentedDonor(), custom_fields: { Mitglied: true } },
        payment: {
          transaction_id: transactionId,
          method: 'VIS',
          status: 'completed',
          ...(reconciled ? { paid_out_amount: 48.55, fee_amount: 1.45, reconciled: true } : {}),
        },
        invoice: null,
        positions: [{ id: '100234', amount: 50.0, campaign: { id: 12, title: 'Wasser für alle' }, purpose: 'Brunnenbau' }],
      },
    },
  });
}

export interface InsertedEvent {
  id: number;
  payload: string;
  /** Its delivery workflow's id, as stored with it. */
  workflowId: string;
}

/** A committed webhook_events row with its stored payload; the envelope id is the row id, as the platform writes it. */
export async function insertEvent(
  db: Db,
  endpointId: number,
  { eventType = 'donation.completed', transactionId = `tx-${randomUUID()}` } = {},
): Promise<InsertedEvent> {
  const { rows } = await db.raw(`SELECT nextval(pg_get_serial_sequence('webhook_events', 'id')) AS id`);
  const id = Number(rows[0].id);
  const payload = donationEnvelope(id, eventType, transactionId);
  // Through the event store, as the platform writes it (with the keys the admin searches it by).
  const inserted = await db.transaction((trx) =>
    writeEvent(trx, {
      id,
      endpoint_id: endpointId,
      event_type: eventType as WebhookEventType,
      payload_version: 'v2.1',
      source_key: `${eventType}:${transactionId}`,
      payload,
      created_at: new Date(),
    }),
  );
  return { id, payload, workflowId: inserted!.workflowId };
}

/** The stored workflow id of an event. */
export async function workflowIdOf(db: Db, eventId: number): Promise<string> {
  return (await eventRow(db, eventId)).workflow_id;
}

export async function eventRow(db: Db, id: number) {
  return db('webhook_events').where({ id }).first();
}

export async function attemptRows(db: Db, eventId: number) {
  return db('webhook_delivery_attempts').where({ event_id: eventId }).orderBy('number');
}
