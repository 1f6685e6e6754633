import { z } from 'zod';
import { defineOperation, type OperationGroup } from '../route-context';
import { requestLogger } from '../http/request-log';
import { checkDependencies } from './readiness';

const dependencyState = z.enum(['ok', 'unavailable']);

/** GET /metrics in Prometheus text format, for every role that serves HTTP. */
export const metricsOperation = defineOperation({
  method: 'get',
  path: '/metrics',
  access: 'metrics',
  summary: 'Prometheus metrics',
  description:
    'Deliveries by outcome, attempt latency, events by status, outbox backlog, HTTP requests, and in the processes ' +
    "that run a delivery worker the Temporal SDK's worker metrics (`temporal_*`). Requires " +
    '`Authorization: Bearer <METRICS_TOKEN>` when a metrics token is configured (always in production). Each ' +
    'replica serves it on its own port for Prometheus on the internal network; the load balancer in front of the ' +
    'replicas (Caddy, in the Compose stack) does not publish it and answers 404 `not_found` for it and every path ' +
    'under it, whatever the credentials.',
  responses: { 200: { description: 'Prometheus text exposition format', contentType: 'text/plain; version=0.0.4' } },
  errors: ['not_found'],
  async handle(ctx, _input, { metrics, temporalSdkMetrics }) {
    const [ours, sdk] = await Promise.all([metrics.registry.metrics(), temporalSdkMetrics?.scrape() ?? '']);
    ctx.type = metrics.registry.contentType;
    ctx.body = ours + sdk;
  },
});

/** Liveness, readiness and metrics: what orchestrators and Prometheus poll. */
export const probesGroup = (): OperationGroup => ({
  prefix: '',
  tag: 'operations',
  description: 'Health checks and metrics for orchestrators and Prometheus',
  operations: [
    defineOperation({
      method: 'get',
      path: '/healthz',
      access: 'public',
      summary: 'Liveness: the process answers and Postgres answers',
      responses: { 200: { description: 'Alive', schema: z.strictObject({ status: z.literal('ok') }) } },
      errors: ['service_unavailable'],
      async handle(ctx, _input, { db }) {
        await db.raw('SELECT 1');
        ctx.body = { status: 'ok' };
      },
    }),
    defineOperation({
      method: 'get',
      path: '/readyz',
      access: 'public',
      summary: 'Readiness: Postgres and Temporal answer within 2 s',
      description: '503 `not_ready` naming what is unavailable, with the state of each dependency beside it.',
      responses: {
        200: {
          description: 'Every dependency answers',
          schema: z.strictObject({ postgres: dependencyState, temporal: dependencyState.optional() }),
        },
      },
      errors: ['not_ready'],
      async handle(ctx, _input, deps) {
        const states = await checkDependencies(deps, requestLogger(ctx, deps.log));
        const unavailable = Object.keys(states).filter((name) => states[name] !== 'ok');
        if (unavailable.length > 0) {
          ctx.status = 503;
          ctx.body = { error: `Not ready: ${unavailable.join(', ')} unavailable`, code: 'not_ready', ...states };
          return;
        }
        ctx.body = states;
      },
    }),
    metricsOperation,
  ],
});
