import Router from '@koa/router';
import type { Context } from 'koa';
import type { RouteContext } from '../api/app';
import { badRequest, notFound } from '../api/errors';
import { jsonBody, parseBody } from '../api/json-body';
import { requireStaff } from '../auth/require-staff';
import type { DeliveryStatus } from '../db/models';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { DELIVERY_STATUSES } from '../webhooks/delivery-status';
import { presentAdminInfo } from './info';
import { pageOf, paginated } from './pagination';
import { changeEndpoint, endpointChangeInput, showEndpoint } from './webhook-endpoint';
import { type EventFilters, findWebhookEvent, listWebhookEvents } from './webhook-events';

function eventFilters(ctx: Context): EventFilters {
  const { status, event } = ctx.query;
  const filters: EventFilters = {};
  if (status !== undefined) {
    if (typeof status !== 'string' || !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
      throw badRequest(`status: must be one of ${DELIVERY_STATUSES.join(', ')}`);
    }
    filters.status = status as DeliveryStatus;
  }
  if (event !== undefined) {
    if (typeof event !== 'string' || !isWebhookEventType(event)) {
      throw badRequest(`event: must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    }
    filters.event = event;
  }
  return filters;
}

/** Staff-only admin API: the webhook endpoint's configuration and the events with their delivery attempts. */
export function createAdminApiRouter(context: RouteContext): Router {
  const { db, config } = context;
  const router = new Router({ prefix: '/admin/api' });
  router.use(requireStaff(db, context.tokens));

  router.get('/info', async function getAdminInfo(ctx) {
    ctx.body = presentAdminInfo(config, ctx.state.user);
  });

  router.get('/webhook-endpoint', async function getWebhookEndpoint(ctx) {
    ctx.body = await showEndpoint(db);
  });

  router.put('/webhook-endpoint', jsonBody(), async function putWebhookEndpoint(ctx) {
    const change = parseBody(endpointChangeInput, ctx.request.body);
    ctx.body = await changeEndpoint(db, config, change, new Date(context.tokens.clock() * 1000));
  });

  router.get('/webhook-events', async function listEvents(ctx) {
    const filters = eventFilters(ctx);
    const page = pageOf(ctx);
    const { count, results } = await listWebhookEvents(db, filters, page);
    ctx.body = paginated(ctx, page, count, results);
  });

  router.get('/webhook-events/:id', async function getEvent(ctx) {
    if (!/^\d{1,15}$/.test(ctx.params.id)) throw badRequest('id: must be an event id');
    const event = await findWebhookEvent(db, Number(ctx.params.id));
    if (!event) throw notFound(`Webhook event ${ctx.params.id} not found`);
    ctx.body = event;
  });

  return router;
}
