import Router from '@koa/router';
import type { RouteContext } from '../api/app';
import { notFound } from '../api/errors';
import { jsonBody, parseBody } from '../api/json-body';
import { z } from 'zod';
import { requireStaff } from '../auth/require-staff';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { DELIVERY_STATUSES } from '../webhooks/delivery-status';
import { assertPageExists, pageBody } from '../api/pagination';
import { paginationParams, parseInput } from '../api/params';
import { presentAdminInfo } from './info';
import { systemResolver } from '../webhooks/subscriber-address';
import { changeEndpoint, endpointChangeInput, showEndpoint } from './webhook-endpoint';
import { findWebhookEvent, listWebhookEvents, parseEventId } from './webhook-events';
import { resendWebhookEvent } from './resend-route';

/** Filters and paging of the event list; each message names its parameter, as on the CRM API. */
const eventListQuery = z.object({
  status: z.enum(DELIVERY_STATUSES, { error: `status must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
  event: z.enum(WEBHOOK_EVENT_TYPES, { error: `event must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }).optional(),
  ...paginationParams,
});

/** Staff-only admin API: the webhook endpoint's configuration, the events with their delivery attempts, resend. */
export function createAdminApiRouter(context: RouteContext): Router {
  const { db, config } = context;
  const router = new Router({ prefix: '/admin/api' });
  router.use(requireStaff(db, context.tokens, context.loginThrottle));

  router.get('/info', async function getAdminInfo(ctx) {
    ctx.body = presentAdminInfo(config, ctx.state.user);
  });

  router.get('/webhook-endpoint', async function getWebhookEndpoint(ctx) {
    ctx.body = await showEndpoint(db);
  });

  router.put('/webhook-endpoint', jsonBody(), async function putWebhookEndpoint(ctx) {
    const change = parseBody(endpointChangeInput, ctx.request.body);
    ctx.body = await changeEndpoint(db, config, change, new Date(context.tokens.clock() * 1000), context.resolveHost ?? systemResolver);
  });

  router.get('/webhook-events', async function listEvents(ctx) {
    const { status, event, ...page } = parseInput(eventListQuery, ctx.query);
    const { count, results } = await listWebhookEvents(db, { status, event }, page);
    assertPageExists(page, count);
    ctx.body = pageBody(ctx, page, count, results);
  });

  router.get('/webhook-events/:id', async function getEvent(ctx) {
    const id = parseEventId(ctx.params.id);
    const event = await findWebhookEvent(db, id);
    if (!event) throw notFound(`Webhook event ${id} not found`);
    ctx.body = event;
  });

  router.post('/webhook-events/:id/resend', resendWebhookEvent(context));

  return router;
}
