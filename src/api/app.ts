import Koa from 'koa';
import Router from '@koa/router';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { type Clock, systemClock, type TokenSettings } from '../auth/tokens';
import { errorMiddleware } from './errors';
import { requestLogging } from './request-log';
import { requestMetrics } from './request-metrics';
import { createMetrics, type Metrics } from '../observability/metrics';
import { createMetricsRouter } from '../observability/metrics-route';
import { createReadinessRouter } from '../observability/readiness';
import { createPlatformRouter } from '../platform/routes';
import { createAdminApiRouter } from '../admin/routes';
import { createResendRouter } from '../admin/resend-route';
import { createAdminPageRouter } from '../admin/page-routes';
import { createApiRouter } from './routes';

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
}

/** What every router factory receives. */
export interface RouteContext extends AppDependencies {
  tokens: TokenSettings;
}

/** Builds the HTTP application; it holds no state of its own, so any number of processes can serve it. */
export function createApp(deps: AppDependencies): Koa {
  const context: RouteContext = {
    ...deps,
    tokens: { secret: deps.config.auth.jwtSecret, clock: deps.clock ?? systemClock },
  };
  const metrics = deps.metrics ?? createMetrics();
  metrics.trackWebhookEvents(deps.db, deps.log);
  const app = new Koa();
  app.proxy = true;
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
  app.use(router.routes()).use(router.allowedMethods());
  for (const probe of [createReadinessRouter(deps, deps.log), createMetricsRouter(metrics.registry, deps.config.metrics.token)]) {
    app.use(probe.routes()).use(probe.allowedMethods({ throw: true }));
  }
  for (const mounted of [
    createApiRouter(context),
    createPlatformRouter(context),
    createAdminApiRouter(context),
    createResendRouter(context),
  ]) {
    app.use(mounted.routes()).use(mounted.allowedMethods({ throw: true }));
  }
  const adminPage = createAdminPageRouter();
  app.use(adminPage.routes()).use(adminPage.allowedMethods({ throw: true }));
  return app;
}
