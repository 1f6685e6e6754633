import { performance } from 'node:perf_hooks';
import type { Context, Next } from 'koa';
import { matchedRoute } from './matched-route';

/** One answered HTTP request; `route` is the router's pattern (or "unmatched"), never the raw path. */
export interface HttpRequestObservation {
  method: string;
  route: string;
  status: number;
  durationMs: number;
}

/** Where the app counts its requests (src/observability/metrics.ts). */
export interface RequestObserver {
  httpRequest(observation: HttpRequestObservation): void;
}

/** Observes every request's duration by method, route pattern and final status (it runs outside error handling). */
export function requestMetrics(metrics: RequestObserver) {
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
