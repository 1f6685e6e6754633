import { performance } from 'node:perf_hooks';
import type { Context, Next } from 'koa';
import type { Metrics } from '../observability/metrics';
import { matchedRoute } from './matched-route';

/** Observes every request's duration by method, route pattern and final status (it runs outside error handling). */
export function requestMetrics(metrics: Pick<Metrics, 'httpRequest'>) {
  return async function measureRequest(ctx: Context, next: Next) {
    const started = performance.now();
    await next();
    metrics.httpRequest({
      method: ctx.method,
      route: matchedRoute(ctx),
      status: ctx.status,
      durationMs: performance.now() - started,
    });
  };
}
