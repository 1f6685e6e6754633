import type { Context } from 'koa';
import { z } from 'zod';
import type { RouteContext } from '../route-context';
import { requestLogger } from '../http/request-log';
import { ApiError, notFound } from '../shared/errors';
import { formatTimestamp } from '../shared/time';
import { processedCount } from '../delivery-rules/recovery';
import { findRecovery, type RecoveryView, startRecovery } from '../temporal/recoveries';
import { countRecoverableEvents } from '../webhook-events/recoverable-events';
import type { WebhookEventType } from '../webhooks/event-types';
import { CREATED_RANGE_ORDER, createdRangeInOrder, eventType, instant } from './admin-inputs';

/* Bulk recovery on the admin API: a preview (how many), the start (once per idempotency key), the progress. */

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{8,64}$/;

const idempotencyKey = z
  .string()
  .regex(IDEMPOTENCY_KEY, { error: 'must be 8 to 64 letters, digits, "-" or "_" (a UUID will do)' })
  .meta({ description: 'Chosen by the client for this request (the admin page: one per preview); the same key never starts a second recovery' });

const filterShape = {
  created_from: instant({ meaning: 'Events created at or after this time' }),
  created_to: instant({ meaning: 'Events created before this time' }),
  events: z
    .array(eventType())
    .max(20)
    .optional()
    .transform((events) => [...new Set(events ?? [])])
    .meta({ description: 'Only these event types; absent or empty: every type' }),
};

export const recoveryPreviewInput = z.strictObject(filterShape).refine(createdRangeInOrder, CREATED_RANGE_ORDER).meta({ id: 'RecoveryFilter' });

export const recoveryStartInput = z
  .strictObject({ ...filterShape, idempotency_key: idempotencyKey })
  .refine(createdRangeInOrder, CREATED_RANGE_ORDER)
  .meta({ id: 'RecoveryRequest' });

export const recoveryIdParams = z.object({
  id: z.string({ error: 'id must be given once' }).regex(IDEMPOTENCY_KEY, { error: 'id must be a recovery’s idempotency key (8 to 64 letters, digits, "-" or "_")' }),
});

type RecoveryFilterInput = z.output<typeof recoveryPreviewInput>;

const filterOf = (input: RecoveryFilterInput) => ({
  createdFrom: input.created_from,
  createdTo: input.created_to,
  eventTypes: input.events as WebhookEventType[],
});

/** How many events a recovery with this filter would resend now. */
export async function previewRecovery(deps: RouteContext, input: RecoveryFilterInput) {
  const { total, byStatus } = await countRecoverableEvents(deps.db, filterOf(input));
  return { count: total, by_status: byStatus };
}

const temporalUnavailable = () => new ApiError('delivery_unavailable', 'The delivery service (Temporal) is not reachable; try again shortly');

const utc = (instantOf: Date | null) => instantOf && formatTimestamp(instantOf, 'utc');

function presentRecovery(view: RecoveryView) {
  return {
    id: view.idempotencyKey,
    workflow_id: view.workflowId,
    status: view.status,
    created_from: formatTimestamp(new Date(view.createdFrom), 'utc'),
    created_to: formatTimestamp(new Date(view.createdTo), 'utc'),
    events: view.eventTypes,
    requested_by: view.requestedBy,
    started_at: utc(view.startedAt),
    closed_at: utc(view.closedAt),
    progress: view.progress && { ...view.progress, processed: processedCount(view.progress) },
  };
}

async function shownRecovery(deps: RouteContext, key: string, withProgress = true) {
  const { temporalClient } = deps;
  if (!temporalClient) throw temporalUnavailable();
  try {
    return await findRecovery(temporalClient, key, withProgress);
  } catch (err) {
    deps.log.warn({ err, recovery: key }, 'recovery could not be read from Temporal');
    throw temporalUnavailable();
  }
}

/**
 * Starts the recovery, or answers the one its idempotency key started before (200; the same request, repeated or
 * sent 30 times at once, starts one recovery). The same key with other parameters is a 409.
 */
export async function requestRecovery(ctx: Context, input: z.output<typeof recoveryStartInput>, deps: RouteContext): Promise<void> {
  const { temporalClient } = deps;
  if (!temporalClient) throw temporalUnavailable();
  const log = requestLogger(ctx, deps.log);
  const filter = filterOf(input);
  let start: Awaited<ReturnType<typeof startRecovery>>;
  try {
    start = await startRecovery(temporalClient, deps.config.temporal.taskQueue, {
      idempotencyKey: input.idempotency_key,
      requestedBy: ctx.state.user.username,
      createdFrom: filter.createdFrom.toISOString(),
      createdTo: filter.createdTo.toISOString(),
      eventTypes: filter.eventTypes,
    });
  } catch (err) {
    log.warn({ err }, 'recovery could not be started in Temporal');
    throw temporalUnavailable();
  }
  if (start === 'conflict') {
    throw new ApiError('idempotency_key_reused', 'This idempotency_key started a recovery with other parameters; choose a new key for a new recovery');
  }
  if (start === 'started') log.info({ recovery: input.idempotency_key, requestedBy: ctx.state.user.username }, 'recovery started');
  const view = await shownRecovery(deps, input.idempotency_key, start === 'exists');
  if (!view) throw temporalUnavailable();
  ctx.status = start === 'started' ? 202 : 200;
  ctx.body = presentRecovery(view);
}

export async function showRecovery(ctx: Context, key: string, deps: RouteContext): Promise<void> {
  const view = await shownRecovery(deps, key);
  if (!view) throw notFound(`No recovery ${key}`, 'recovery_not_found');
  ctx.body = presentRecovery(view);
}
