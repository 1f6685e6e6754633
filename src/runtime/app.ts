import Koa from 'koa';
import { createPasswordChecks } from '../auth/password-checks';
import { systemClock } from '../auth/tokens';
import { createMetrics } from '../observability/metrics';
import type { AppDependencies, OperationGroup, RouteContext } from '../route-context';
import { errorMiddleware } from '../http/error-middleware';
import { createRouter, suggestDocumentedSpelling } from '../http/mount';
import { metricsOperation } from '../probes/operations';
import { requestLogging } from '../http/request-log';
import { requestMetrics } from '../http/request-metrics';
import { responseHeaders } from '../http/response-headers';
import { setBodyTimeout } from '../http/body';
import { setPublicOrigin } from '../http/request-origin';
import { trustForwardingHeadersFrom } from '../http/trusted-proxies';
import { createGuards } from './access-guards';
import { httpSurface } from './http-surface';

/** What operations receive: the dependencies, plus the clock's now, the token settings and password checks every guard shares. */
export function routeContext(deps: AppDependencies): RouteContext {
  const clock = deps.clock ?? systemClock;
  return {
    ...deps,
    clock,
    now: () => new Date(clock() * 1000),
    tokens: { secrets: deps.config.auth.jwtSecrets, clock, sessionMaxSeconds: deps.config.auth.sessionMaxSeconds },
    passwordChecks: createPasswordChecks(deps.db, deps.config.auth.loginLimits),
    metrics: deps.metrics ?? createMetrics(),
  };
}

function buildApp(context: RouteContext, groups: OperationGroup[]): Koa {
  const { router } = createRouter(groups, context, createGuards(context));
  const app = new Koa();
  const { trustedProxies, publicOrigin, timeouts } = context.config.http;
  // Koa reads X-Forwarded-Host and -Proto only with `proxy`; the first middleware removes them unless a trusted
  // proxy sent them, and decides the client address itself.
  app.proxy = trustedProxies.length > 0;
  setPublicOrigin(app, publicOrigin);
  setBodyTimeout(app, timeouts.bodySeconds * 1000);
  app.use(trustForwardingHeadersFrom(trustedProxies));
  // Outside the error middleware, so that they see the status it decides.
  app.use(requestLogging(context.log)).use(requestMetrics(context.metrics)).use(responseHeaders);
  app.use(errorMiddleware(context.log));
  // Errors after the response has begun (a client that leaves mid-stream) reach only this listener.
  app.on('error', (err: Error) => context.log.warn({ err }, 'response not completed'));
  app.use(suggestDocumentedSpelling(router)).use(router.routes()).use(router.allowedMethods());
  return app;
}

/** The HTTP service: every operation of the surface. It holds no state of its own, so any number of processes can serve it. */
export function createApp(deps: AppDependencies): Koa {
  const context = routeContext(deps);
  // Only the API registers the gauges read from Postgres: every replica would report the same numbers.
  context.metrics.trackWebhookEvents(deps.db, deps.log, {
    stuckAfterMinutes: deps.config.webhooks.stuckAfterMinutes,
    endpointFailingAfterMinutes: deps.config.webhooks.endpointFailingAfterMinutes,
    // The clock the admin API judges stuck events and the failing endpoint by, so that the metric and the page agree.
    clock: context.now,
  });
  return buildApp(context, httpSurface());
}

/** The metrics alone, for a process that serves no API (worker, relay) but should still be scraped. */
export function createMetricsApp(deps: AppDependencies): Koa {
  return buildApp(routeContext(deps), [{ prefix: '', tag: 'operations', description: 'Metrics', operations: [metricsOperation] }]);
}
