import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import type { Registry } from 'prom-client';
import { ApiError, errorMiddleware } from '../api/errors';
import type { Logger } from '../logger';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Compares digests, so that the time taken says nothing about how much of the token was right. */
function bearerMatches(header: string, token: string): boolean {
  return timingSafeEqual(digest(header), digest(`Bearer ${token}`));
}

/**
 * GET /metrics in Prometheus text format. Without a token it is open: keep it on an internal network (the
 * production proxy does not forward it). With a token, only `Authorization: Bearer <token>` is answered.
 */
export function createMetricsRouter(registry: Registry, token: string | undefined): Router {
  const router = new Router();
  router.get('/metrics', async function metrics(ctx) {
    if (token !== undefined && !bearerMatches(ctx.get('Authorization'), token)) {
      throw new ApiError(401, 'not_authenticated', 'Metrics need the metrics bearer token', {
        'WWW-Authenticate': 'Bearer realm="metrics"',
      });
    }
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  return router;
}

/** The metrics alone, for a process that serves no API (worker, relay) but should still be scraped. */
export function createMetricsApp(registry: Registry, token: string | undefined, log: Logger): Koa {
  const router = createMetricsRouter(registry, token);
  const app = new Koa();
  app.use(errorMiddleware(log));
  app.use(router.routes()).use(router.allowedMethods({ throw: true }));
  return app;
}
