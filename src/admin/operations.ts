import { z } from 'zod';
import type { Config } from '../config';
import { defineOperation, type Operation, type OperationGroup } from '../route-context';
import { assertPageExists, pageBody, paginationParams } from '../http/pagination';
import { idParam } from '../http/integer-params';
import { notFound } from '../shared/errors';
import { DELIVERY_STATUSES } from '../delivery-rules/delivery-status';
import { RESEND_RULE } from '../delivery-rules/resend-requests';
import { systemResolver } from '../webhooks/subscriber-address';
import { CREATED_RANGE_ORDER, createdRangeInOrder, eventType, instant, textParam } from './admin-inputs';
import { deliveryHealth, HEALTH_WINDOWS } from './delivery-health';
import { readInstallation } from '../webhook-events/installation';
import { presentAdminInfo } from './info';
import { previewRecovery, recoveryIdParams, recoveryPreviewInput, recoveryStartInput, requestRecovery, showRecovery } from './recovery-routes';
import { resendWebhookEvent } from './resend-route';
import {
  adminInfoSchema,
  deliveryHealthSchema,
  recoveryPreviewSchema,
  recoverySchema,
  resendAcceptedSchema,
  testEventCreatedSchema,
  webhookEndpointSchema,
  webhookEventDetailSchema,
  webhookEventPageSchema,
} from './response-schemas';
import { changeEndpoint, endpointChangeInput, showEndpoint } from './endpoint-settings';
import { sendTestEvent, testEventInput } from './test-event-route';
import { findWebhookEvent, listWebhookEvents, type StuckView } from './event-views';

/** Filters, search and paging of the event list; each message names its parameter, as on the CRM API. */
const eventListQuery = z
  .object({
    status: z.enum(DELIVERY_STATUSES, { error: `status must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
    event: eventType('event').optional(),
    transaction_id: textParam('transaction_id', 200).optional().meta({ description: 'The payment’s transaction id, exactly' }),
    reference: textParam('reference', 100)
      .optional()
      .meta({ description: 'A donation, checkout or shop order number, exactly (a position’s number also finds its checkout’s event)' }),
    email: textParam('email', 320).optional().meta({ description: 'The donor’s, subscriber’s or customer’s e-mail, exactly but without regard to case' }),
    created_from: instant({ name: 'created_from', meaning: 'Created at or after' }).optional(),
    created_to: instant({ name: 'created_to', meaning: 'Created before' }).optional().meta({ example: '2025-07-16T08:00:00Z' }),
    stuck: z
      .literal('true', { error: 'stuck must be true, or left out' })
      .optional()
      .meta({ description: 'Only events stuck now: waiting without an attempt, or failed with the next attempt overdue, for longer than DELIVERY_STUCK_AFTER_MINUTES' }),
    ...paginationParams,
  })
  .refine(createdRangeInOrder, CREATED_RANGE_ORDER);

const healthWindows = Object.keys(HEALTH_WINDOWS) as (keyof typeof HEALTH_WINDOWS)[];
const healthQuery = z.object({
  window: z
    .enum(healthWindows, { error: `window must be one of ${healthWindows.join(', ')}` })
    .optional()
    .transform((window) => window ?? '24h')
    .meta({ description: 'The last 24 hours (default) or 7 days' }),
});

/** Stuck is judged at the app's clock, the clock every recorded time of the API uses. */
const stuckView = (config: Config, now: () => Date): StuckView => ({
  now: now(),
  stuckAfterMinutes: config.webhooks.stuckAfterMinutes,
});

/** Event ids are bigserial: any positive integer JavaScript holds exactly. */
const eventIdParams = z.object({ id: idParam('id', { max: Number.MAX_SAFE_INTEGER }) });

/** Who is signed in, and the choices the admin page offers. */
const infoOperations = (): Operation[] => [
  defineOperation({
    method: 'get',
    path: '/info',
    access: 'staff',
    summary: 'Who is signed in, and the choices the admin page offers',
    responses: { 200: { description: 'Signed-in user and the lists of statuses, event types, payload versions', schema: adminInfoSchema } },
    async handle(ctx, _input, { config, db }) {
      ctx.body = presentAdminInfo(config, ctx.state.user, await readInstallation(db));
    },
  }),
];

/** The webhook endpoint: its configuration, and test events sent to it. */
const endpointOperations = (): Operation[] => [
  defineOperation({
    method: 'get',
    path: '/webhook-endpoint',
    access: 'staff',
    summary: 'The webhook endpoint’s configuration',
    responses: { 200: { description: 'The endpoint (defaults when none is configured yet)', schema: webhookEndpointSchema } },
    async handle(ctx, _input, { db }) {
      ctx.body = await showEndpoint(db);
    },
  }),
  defineOperation({
    method: 'put',
    path: '/webhook-endpoint',
    access: 'staff',
    summary: 'Change the webhook endpoint',
    description: 'Only the fields given change. Password and signing secret are write-only; `null` removes them.',
    body: endpointChangeInput,
    responses: { 200: { description: 'The endpoint as saved', schema: webhookEndpointSchema } },
    errors: ['endpoint_secret_unreadable'],
    async handle(ctx, { body }, { db, config, now, resolveHost }) {
      ctx.body = await changeEndpoint(db, config, body, now(), resolveHost ?? systemResolver);
    },
  }),
  defineOperation({
    method: 'post',
    path: '/webhook-endpoint/test-events',
    access: 'staff',
    summary: 'Send a test event of a chosen type to the endpoint',
    description:
      'Sample data in the endpoint’s payload version, recorded as an event of its own and delivered like a real one (signed, with ' +
      'Basic auth, retried). Its envelope has environment `test`, and its requests carry the header `webhook-test: 1`.',
    body: testEventInput,
    responses: { 202: { description: 'The test event is recorded; the relay starts its delivery', schema: testEventCreatedSchema } },
    errors: ['endpoint_not_configured', 'endpoint_inactive'],
    async handle(ctx, { body }, deps) {
      await sendTestEvent(ctx, body.event, deps);
    },
  }),
];

/** The events with their delivery attempts: the list with its filters and search, one event, resend. */
const eventOperations = (): Operation[] => [
  defineOperation({
    method: 'get',
    path: '/webhook-events',
    access: 'staff',
    summary: 'Webhook events, newest first: filtered by status, type and created time, or found by transaction id, number or e-mail',
    query: eventListQuery,
    responses: { 200: { description: 'One page of events', schema: webhookEventPageSchema } },
    errors: ['page_not_found'],
    async handle(ctx, { query }, { db, config, now }) {
      const { status, event, transaction_id, reference, email, created_from, created_to, stuck, ...page } = query;
      const filters = { status, event, transactionId: transaction_id, reference, email, createdFrom: created_from, createdTo: created_to };
      const { count, results } = await listWebhookEvents(db, { ...filters, onlyStuck: stuck === 'true' }, page, stuckView(config, now));
      assertPageExists(page, count);
      ctx.body = pageBody(ctx, page, count, results);
    },
  }),
  defineOperation({
    method: 'get',
    path: '/webhook-events/:id',
    access: 'staff',
    summary: 'One webhook event with its payload and every delivery attempt',
    params: eventIdParams,
    responses: { 200: { description: 'The event', schema: webhookEventDetailSchema } },
    errors: ['webhook_event_not_found'],
    async handle(ctx, { params }, { db, config, now }) {
      const event = await findWebhookEvent(db, params.id, stuckView(config, now));
      if (!event) throw notFound(`Webhook event ${params.id} not found`, 'webhook_event_not_found');
      ctx.body = event;
    },
  }),
  defineOperation({
    method: 'post',
    path: '/webhook-events/:id/resend',
    access: 'staff',
    summary: 'Deliver an event again, as a manual attempt with the same envelope id',
    description: `During an attempt (the first one included), in backoff or after max retries; 202 once the request is handed to Temporal. ${RESEND_RULE}`,
    params: eventIdParams,
    responses: { 202: { description: 'The request is handed to the delivery workflow', schema: resendAcceptedSchema } },
    errors: ['webhook_event_not_found', 'already_delivered', 'first_attempt_pending', 'payload_dropped', 'workflow_id_conflict', 'delivery_unavailable'],
    async handle(ctx, { params }, deps) {
      await resendWebhookEvent(ctx, params.id, deps);
    },
  }),
];

/** Bulk recovery: how many events it would resend, starting one, its progress. */
const recoveryOperations = (): Operation[] => [
  defineOperation({
    method: 'post',
    path: '/recoveries/preview',
    access: 'staff',
    summary: 'How many events a bulk recovery would resend: failed or at max retries, created in the range, of the types',
    description: 'Changes nothing. Test events and events whose payload was dropped are never resent.',
    body: recoveryPreviewInput,
    responses: { 200: { description: 'The count, by status', schema: recoveryPreviewSchema } },
    async handle(ctx, { body }, deps) {
      ctx.body = await previewRecovery(deps, body);
    },
  }),
  defineOperation({
    method: 'post',
    path: '/recoveries',
    access: 'staff',
    summary: 'Resend every event failed or at max retries, created in the range, of the types, as one recovery workflow',
    description:
      'At most 10 events at a time, each until its attempt is recorded, through the event’s own delivery workflow (a manual attempt, ' +
      'as with resend). Once per idempotency key: repeating the request (or sending it many times at once) answers the recovery ' +
      'it started, 200; the same key with other parameters is a 409.',
    body: recoveryStartInput,
    responses: {
      202: { description: 'The recovery started; its progress follows on GET /admin/api/recoveries/{id}', schema: recoverySchema },
      200: { description: 'This idempotency key started the recovery before: it, with its progress', schema: recoverySchema },
    },
    errors: ['idempotency_key_reused', 'delivery_unavailable'],
    async handle(ctx, { body }, deps) {
      await requestRecovery(ctx, body, deps);
    },
  }),
  defineOperation({
    method: 'get',
    path: '/recoveries/:id',
    access: 'staff',
    summary: 'A bulk recovery and its progress',
    params: recoveryIdParams,
    responses: { 200: { description: 'The recovery', schema: recoverySchema } },
    errors: ['recovery_not_found', 'delivery_unavailable'],
    async handle(ctx, { params }, deps) {
      await showRecovery(ctx, params.id, deps);
    },
  }),
];

/** The delivery health of the last 24 hours or 7 days. */
const healthOperations = (): Operation[] => [
  defineOperation({
    method: 'get',
    path: '/delivery-health',
    access: 'staff',
    summary: 'Delivery attempts per hour by outcome, success rate, median and p95 attempt time, last success',
    query: healthQuery,
    responses: { 200: { description: 'The last 24 hours or 7 days', schema: deliveryHealthSchema } },
    async handle(ctx, { query }, { db, now }) {
      ctx.body = await deliveryHealth(db, query.window, now());
    },
  }),
];

/**
 * Staff-only admin API: the webhook endpoint's configuration, the events with their delivery attempts, resend, bulk
 * recovery, test events and the delivery health.
 */
export const adminApiGroup = (): OperationGroup => ({
  prefix: '/admin/api',
  tag: 'admin',
  description:
    'Webhook endpoint configuration, events, delivery attempts, resend and bulk recovery, test events, delivery health (staff only; used by /admin/)',
  operations: [...infoOperations(), ...endpointOperations(), ...eventOperations(), ...recoveryOperations(), ...healthOperations()],
});
