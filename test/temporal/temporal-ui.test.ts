import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import type { ReceivedRequest, Reply } from '../../src/demo/subscriber-server';
import { deliveryQueueOf, requestResend } from '../../src/temporal/delivery-workflows';
import { findEventDelivery } from '../../src/webhook-events/event-deliveries';
import { deliveryStateQuery } from '../../workflows';
import { createTestDatabase } from '../support/database';
import { bundleDeliveryWorkflows, createTestWorker, startDelivery } from '../support/delivery';
import { eventually } from '../support/eventually';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { subscribersPerTest } from '../support/test-subscribers';
import { eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundle;
let db: Db;
const startSubscriber = subscribersPerTest();

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  workflowBundle = await bundleDeliveryWorkflows();
  ({ db } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
  await env?.teardown();
});

async function withWorker<T>(body: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `ui-${randomUUID()}`;
  const worker = await createTestWorker({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    db,
    keyring: TEST_KEYRING,
  });
  return worker.runUntil(body(taskQueue));
}

async function newEvent(reply: (request: ReceivedRequest) => Reply) {
  const subscriber = await startSubscriber({ reply });
  const endpointId = await insertEndpoint(db, { url: `${subscriber.url}` });
  return { subscriber, event: await insertEvent(db, endpointId, { transactionId: `tx-${randomUUID()}` }) };
}

const handleOf = (event: { workflowId: string }) => env.client.workflow.getHandle(event.workflowId);

/** The workflow's search attributes by name. */
async function searchAttributes(event: { workflowId: string }) {
  const { typedSearchAttributes } = await handleOf(event).describe();
  return Object.fromEntries(typedSearchAttributes.getAll().map(({ key, value }) => [key.name, value]));
}

const currentDetails = async (event: { workflowId: string }) =>
  ((await handleOf(event).query('__temporal_workflow_metadata')) as { currentDetails: string }).currentDetails;

const summaryOf = (metadata: { summary?: Payload | null } | null | undefined) =>
  metadata?.summary ? defaultPayloadConverter.fromPayload<string>(metadata.summary) : undefined;

/** Swiss local time of day, as the admin page shows it. */
const swissClock = (date: Date) =>
  new Intl.DateTimeFormat('de-CH', { timeZone: 'Europe/Zurich', hour: '2-digit', minute: '2-digit' }).format(date);
const swissDay = (date: Date) => new Intl.DateTimeFormat('de-CH', { timeZone: 'Europe/Zurich', day: '2-digit', month: '2-digit' }).format(date);
/** A time as the texts show it after another: with its day (`29.11. 00:07`) when the Swiss day is not the other's. */
const swissClockAfter = (date: Date, earlier: Date) => (swissDay(date) === swissDay(earlier) ? swissClock(date) : `${swissDay(date)} ${swissClock(date)}`);

test('a delivery says what it delivers, where it stands after every transition, and when the next attempt is due', async () => {
  const { event } = await newEvent((request) => (request.index < 2 ? { status: 500, body: 'down' } : { status: 200, body: 'ok' }));
  const { facts } = (await findEventDelivery(db, event.id))!;
  expect(facts).toMatchObject({ eventId: event.id, eventType: 'donation.completed', payloadVersion: 'v2.1', environment: 'prod' });
  expect(facts.transactionId).toMatch(/^tx-/);

  await withWorker(async (taskQueue) => {
    await startDelivery(db, env.client, taskQueue, event.id);
    const description = await handleOf(event).describe();
    expect(await description.staticSummary()).toBe(`donation.completed #${event.id} → ${facts.subscriberHost}`);
    expect(await description.staticDetails()).toBe(
      [
        `**Event:** donation.completed, id ${event.id}`,
        '**Payload version:** v2.1',
        `**Subscriber:** ${facts.subscriberHost}`,
        `**Transaction:** ${facts.transactionId}`,
        '**Environment:** prod',
      ].join('\n'),
    );

    // In backoff after the first failure (workflow time stands still while nobody waits for a result).
    const failed = await eventually(async () => {
      const row = await eventRow(db, event.id);
      return row.status === 'failed' && row;
    });
    expect(await handleOf(event).query(deliveryStateQuery)).toEqual({
      status: 'failed',
      attempts: 1,
      nextAttemptAt: (failed.next_attempt_at as Date).toISOString(),
    });
    expect(await searchAttributes(event)).toEqual({
      WebhookEventType: 'donation.completed',
      WebhookEnvironment: 'prod',
      WebhookStatus: 'failed',
      WebhookAttempts: 1,
    });
    const [firstAttempt] = await db('webhook_delivery_attempts').where({ event_id: event.id });
    expect(await currentDetails(event)).toBe(
      `Fehlgeschlagen — Versuch 1 von 5 um ${swissClock(firstAttempt.started_at)} (HTTP 500 in ${firstAttempt.duration_ms} ms), ` +
        `nächster Versuch um ${swissClockAfter(failed.next_attempt_at, firstAttempt.started_at)}`,
    );

    expect(await handleOf(event).result()).toBe('delivered');
    // Queries of an ended workflow are answered by a worker replaying it.
    expect(await handleOf(event).query(deliveryStateQuery)).toEqual({ status: 'delivered', attempts: 3, nextAttemptAt: null });
    expect(await currentDetails(event)).toMatch(/^Zugestellt — Versuch 3 von 5 um \d\d:\d\d \(HTTP 200 in \d+ ms\)$/);
  });

  expect(await searchAttributes(event)).toMatchObject({ WebhookStatus: 'delivered', WebhookAttempts: 3 });

  // Every attempt is a local activity marker with a summary; the only timers are the two backoffs, saying why.
  const history = (await handleOf(event).fetchHistory()).events ?? [];
  const summaries = (attribute: 'markerRecordedEventAttributes' | 'timerStartedEventAttributes') =>
    history.filter((historyEvent) => historyEvent[attribute]).map((historyEvent) => summaryOf(historyEvent.userMetadata));
  expect(summaries('markerRecordedEventAttributes')).toEqual(['POST attempt 1 of 5', 'POST attempt 2 of 5', 'POST attempt 3 of 5']);
  const backoffs = summaries('timerStartedEventAttributes');
  expect(backoffs).toHaveLength(2);
  expect(backoffs[0]).toMatch(/^Next attempt at (\d\d\.\d\d\. )?\d\d:\d\d \(Zurich\), after attempt 1 → HTTP 500 in \d+ ms$/);
  expect(backoffs[1]).toMatch(/^Next attempt at (\d\d\.\d\d\. )?\d\d:\d\d \(Zurich\), after attempt 2 → HTTP 500 in \d+ ms$/);
});

test('at max retries the status says so; a resend after that is a run of its own that says it is one', async () => {
  const { event } = await newEvent((request) => (request.index < 6 ? { status: 503, body: 'busy' } : { status: 200 }));
  await withWorker(async (taskQueue) => {
    await startDelivery(db, env.client, taskQueue, event.id);
    expect(await handleOf(event).result()).toBe('max_retries_reached');
    expect(await searchAttributes(event)).toMatchObject({ WebhookStatus: 'max_retries_reached', WebhookAttempts: 5 });
    expect(await currentDetails(event)).toMatch(/^Maximale Wiederholungen erreicht — Versuch 5 von 5 um \d\d:\d\d \(HTTP 503 in \d+ ms\)$/);
    const deliveryRun = (await handleOf(event).describe()).runId;

    // A failed manual attempt, then a delivered one.
    for (const expected of ['max_retries_reached', 'delivered']) {
      expect(await requestResend(env.client, await deliveryQueueOf(db, taskQueue), (await findEventDelivery(db, event.id))!)).toBe('accepted');
      expect(await handleOf(event).result()).toBe(expected);
    }
    const resendRun = await handleOf(event).describe();
    expect(resendRun.runId).not.toBe(deliveryRun);
    expect(resendRun.type).toBe('resendEvent');
    // (The time-skipping server drops the summary of a signal-with-start; the dev server test checks it.)
    expect(await searchAttributes(event)).toMatchObject({ WebhookStatus: 'delivered', WebhookAttempts: 7 });
    expect(await currentDetails(event)).toMatch(/^Zugestellt — manueller Versuch \(Nr\. 7\) um \d\d:\d\d \(HTTP 200 in \d+ ms\)$/);
    // The delivery run keeps what it ended with.
    const ended = await env.client.workflow.getHandle(event.workflowId, deliveryRun).describe();
    expect(ended.typedSearchAttributes.get({ name: 'WebhookStatus', type: 'KEYWORD' })).toBe('max_retries_reached');
  });
});
