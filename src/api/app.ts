import Koa from 'koa';
import Router from '@koa/router';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { type Clock, systemClock, type TokenSettings } from '../auth/tokens';
import { createLoginThrottle, type LoginThrottle } from '../auth/login-throttle';
import { ApiError, errorMiddleware } from './errors';
import { requestLogging } from './request-log';
import { requestMetrics } from './request-metrics';
import { createMetrics, type Metrics } from '../observability/metrics';
import { createMetricsRouter } from '../observability/metrics-route';
import { createReadinessRouter } from '../observability/readiness';
import { createPlatformRouter } from '../platform/routes';
import { createAdminApiRouter } from '../admin/routes';
import { createAdminPageRouter } from '../admin/page-routes';
import { createApiRouter } from './routes';
import type { ResolveHost } from '../webhooks/subscriber-address';

export interface AppDependencies {
  db: Db;
  config: Config;
  log: Logger;
  /** Seconds since the epoch; tests pass their own to move past token expiry. */
  clock?: Clock;
  /** For the admin resend; without it a resend answers 503. */
  temporalClient?: TemporalClient;
  /** The process's metrics (shared with its worker in the all-in-one role); a registry of its own otherwise. */
  metrics?: Metrics;
  /** DNS for the subscriber URL check; tests inject a table (default: the system resolver). */
  resolveHost?: ResolveHost;
}

/** What every router factory receives. */
export interface RouteContext extends AppDependencies {
  tokens: TokenSettings;
  /** Shared by every password check (token creation and HTTP Basic). */
  loginThrottle: LoginThrottle;
}

/**
 * A method the router does not know at all (TRACE, CONNECT, …) is the client's mistake like any other wrong method:
 * 405, not the router's default 501, which would read as a server failure.
 */
const methodErrors = {
  throw: true,
  notImplemented: () => new ApiError(405, 'method_not_allowed', 'Method Not Allowed'),
};

/** Builds the HTTP application; it holds no state of its own, so any number of processes can serve it. */
export function createApp(deps: AppDependencies): Koa {
  const clock = deps.clock ?? systemClock;
  const context: RouteContext = {
    ...deps,
    tokens: { secrets: deps.config.auth.jwtSecrets, clock },
    loginThrottle: createLoginThrottle(deps.db, deps.config.auth.loginLimits),
  };
  const metrics = deps.metrics ?? createMetrics();
  metrics.trackWebhookEvents(deps.db, deps.log);
  const app = new Koa();
  app.proxy = true;
  // ctx.ip is the address the nearest proxy saw (the last X-Forwarded-For entry), which a client cannot forge.
  app.maxIpsCount = 1;
  // Outside the error middleware, so that they see the status it decides.
  app.use(requestLogging(deps.log)).use(requestMetrics(metrics));
  app.use(errorMiddleware(deps.log));
  // Errors after the response has begun (a client that leaves mid-stream) reach only this listener.
  app.on('error', (err: Error) => deps.log.warn({ err }, 'response not completed'));

  const router = new Router();
  router.get('/healthz', async function healthz(ctx) {
    await context.db.raw('SELECT 1');
    ctx.body = { status: 'ok' };
  });
  app.use(router.routes()).use(router.allowedMethods(methodErrors));
  for (const probe of [createReadinessRouter(deps, deps.log), createMetricsRouter(metrics.registry, deps.config.metrics.token)]) {
    app.use(probe.routes()).use(probe.allowedMethods(methodErrors));
  }
  for (const mounted of [
    createApiRouter(context),
    createPlatformRouter(context),
    createAdminApiRouter(context),
  ]) {
    app.use(mounted.routes()).use(mounted.allowedMethods(methodErrors));
  }
  const adminPage = createAdminPageRouter();
  app.use(adminPage.routes()).use(adminPage.allowedMethods(methodErrors));
  return app;
}
