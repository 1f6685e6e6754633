import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../../src/db/knex';
import { createKeyring, generateSecretKey } from '../../src/secrets/keyring';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../src/webhooks/event-types';
import { type EndpointSettings, saveEndpoint, sealEndpointSecrets } from '../../src/webhook-endpoint/endpoint-store';
import { presentedDonor } from './platform-donor';
import { type NewWebhookEvent, insertEvent as writeEvent } from '../../src/webhook-events/outbox';
import { type EnvelopeEnvironment, type RenderedPayload, renderEnvelope } from '../../src/webhooks/envelope';
import { donationEvent } from '../../src/webhooks/payloads/donation';
import type { DonationData, DonorObject } from '../../src/webhooks/schemas/payload-schemas';

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

/**
 * An active endpoint subscribed to every event type (v1 unless `settings` say otherwise), as the admin saves it
 * (through the endpoint store).
 */
export async function saveEndpointForEveryEvent(db: Db, settings: Partial<EndpointSettings>, now = new Date(), keyring = TEST_KEYRING): Promise<void> {
  const endpoint: EndpointSettings = {
    url: 'https://crm.example.org/hooks',
    active: true,
    payload_version: 'v1',
    events: [...WEBHOOK_EVENT_TYPES],
    basic_auth_username: null,
    basic_auth_password: null,
    signing_secret: null,
    ...settings,
  };
  await saveEndpoint(db, endpoint, now, keyring);
}

/** The `data` of a v2.1 event as the platform renders it: a single CHF donation paid by card. */
function donationData(eventType: string, transactionId: string): DonationData {
  const reconciled = eventType === 'donation.reconciled';
  const donor: DonorObject = { ...presentedDonor(), custom_fields: { Mitglied: true } };
  return {
    donation: {
      id: '100234',
      created_at: '2025-07-15T10:29:58Z',
      amount: 50.0,
      currency: 'CHF',
      campaign: { id: 12, title: 'Wasser für alle' },
      purpose: 'Brunnenbau',
      donor,
      payment: {
        transaction_id: transactionId,
        method: 'VIS',
        status: 'completed',
        ...(reconciled ? { paid_out_amount: 48.55, fee_amount: 1.45, reconciled: true as const } : {}),
      },
      invoice: null,
      positions: [{ id: '100234', amount: 50.0, campaign: { id: 12, title: 'Wasser für alle' }, purpose: 'Brunnenbau' }],
    },
  };
}

export interface InsertedEvent {
  id: number;
  payload: string;
  /** Its delivery workflow's id, as stored with it. */
  workflowId: string;
}

export interface EventOptions {
  /** A donation event type (the data is a donation's). */
  eventType?: string;
  transactionId?: string;
  environment?: EnvelopeEnvironment;
  /**
   * Written as release 0.1.0 writes an event (still running during a deploy): the payload and the search keys, which
   * it takes from the payload itself, but no environment column, which it does not know.
   */
  asPreviousRelease?: boolean;
}

/** A committed webhook_events row with its stored payload; the envelope id is the row id, as the platform writes it. */
export async function insertEvent(
  db: Db,
  endpointId: number,
  { eventType = 'donation.completed', transactionId = `tx-${randomUUID()}`, environment = 'prod', asPreviousRelease = false }: EventOptions = {},
): Promise<InsertedEvent> {
  const { rows } = await db.raw(`SELECT nextval(pg_get_serial_sequence('webhook_events', 'id')) AS id`);
  const id = Number(rows[0].id);
  const type = eventType as WebhookEventType;
  const rendered = renderEnvelope({
    id,
    event: type,
    createdAt: new Date('2025-07-15T10:30:00Z'),
    environment,
    rendered: donationEvent(`checkout:${transactionId}`, donationData(eventType, transactionId)),
  });
  const event = {
    id,
    endpoint_id: endpointId,
    event_type: type,
    payload_version: 'v2.1' as const,
    source_key: `${eventType}:${transactionId}`,
    created_at: new Date(),
  };
  // Through the envelope and the outbox, as the platform writes it (with the facts stored beside the payload).
  const inserted = await db.transaction((trx) =>
    asPreviousRelease ? writeAsPreviousRelease(trx, event, rendered) : writeEvent(trx, { ...event, payload: rendered }),
  );
  return { id, payload: rendered.text, workflowId: inserted!.workflowId };
}

async function writeAsPreviousRelease(trx: Knex.Transaction, event: Omit<NewWebhookEvent, 'payload'>, { text, searchKeys }: RenderedPayload) {
  const keys = { transaction_id: searchKeys.transactionId, donor_email: searchKeys.email };
  const [{ workflow_id: workflowId }] = await trx('webhook_events')
    .insert({ ...event, payload: text, ...keys, status: 'waiting', updated_at: event.created_at })
    .returning('workflow_id');
  await trx('webhook_event_references').insert(searchKeys.references.map((reference) => ({ reference, event_id: event.id })));
  return { workflowId: workflowId as string };
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

/** An event's attempt starts without a recorded outcome (migration 022), oldest first. */
export async function attemptStartRows(db: Db, eventId: number) {
  return db('webhook_attempt_starts').where({ event_id: eventId }).orderBy('id').select('number', 'manual', 'started_at');
}
