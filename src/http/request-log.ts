import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { nameServerSpan } from '../tracing';
import { matchedRoute, UNMATCHED_ROUTE } from './matched-route';

export const REQUEST_ID_HEADER = 'X-Request-Id';

// An id from a proxy or client is kept when it is short and plain; anything else could forge or bloat log lines.
const ACCEPTED_REQUEST_ID = /^[\w.:-]{1,64}$/;
// Polled every few seconds by orchestrators and Prometheus: logged at debug so that they do not drown the rest.
const PROBE_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

interface RequestLogState {
  requestId: string;
  log: Logger;
}

/** The request's logger (carrying its request id), or `fallback` outside the request-log middleware. */
export function requestLogger(ctx: Context, fallback: Logger): Logger {
  return (ctx.state as Partial<RequestLogState>).log ?? fallback;
}

/**
 * Outermost middleware: gives each request an id (the caller's X-Request-Id when acceptable, otherwise a new
 * UUID), echoes it, puts a logger carrying it on `ctx.state.log`, and writes one line per request once the error
 * middleware has decided the status, and names the request's span (while tracing) by its route. It logs the route
 * pattern, never the path's values, the query, headers or bodies: those may carry credentials.
 */
export function requestLogging(log: Logger) {
  return async function logRequest(ctx: Context, next: Next) {
    const started = performance.now();
    const offered = ctx.get(REQUEST_ID_HEADER);
    const requestId = ACCEPTED_REQUEST_ID.test(offered) ? offered : randomUUID();
    const state: RequestLogState = { requestId, log: log.child({ requestId }) };
    Object.assign(ctx.state, state);
    ctx.set(REQUEST_ID_HEADER, requestId);

    await next();

    const route = matchedRoute(ctx);
    if (route !== UNMATCHED_ROUTE) nameServerSpan(route);
    const level = ctx.status >= 500 ? 'error' : PROBE_ROUTES.has(route) ? 'debug' : 'info';
    state.log[level](
      { method: ctx.method, route, status: ctx.status, durationMs: Math.round(performance.now() - started) },
      'request',
    );
  };
}
