import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import { parseAuthorization } from '../auth/authorization-header';
import { requireStaff } from '../auth/require-staff';
import { ApiError } from '../shared/errors';
import type { RouteContext } from '../route-context';
import type { AccessGuards } from '../http/mount';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The Bearer scheme in any case, as on staff routes; compares digests, so that the time taken says nothing about how
 * much of the token was right.
 */
function bearerMatches(header: string, token: string): boolean {
  const parsed = parseAuthorization(header);
  return parsed?.scheme === 'bearer' && timingSafeEqual(digest(parsed.credentials), digest(token));
}

/** `Authorization: Bearer <METRICS_TOKEN>` when a metrics token is configured; open otherwise. */
function requireMetricsToken(token: string | undefined): Middleware | undefined {
  if (token === undefined) return undefined;
  return async function metricsTokenOnly(ctx: Context, next: Next) {
    if (!bearerMatches(ctx.get('Authorization'), token)) {
      throw new ApiError('not_authenticated', 'Metrics need the metrics bearer token', {
        'WWW-Authenticate': 'Bearer realm="metrics"',
      });
    }
    await next();
  };
}

/** The middleware that enforces each access rule, made once per app; undefined where nothing is to check. */
export function createGuards(deps: RouteContext): AccessGuards {
  return {
    public: undefined,
    staff: requireStaff(deps.db, deps.tokens, deps.passwordChecks),
    metrics: requireMetricsToken(deps.config.metrics.token),
  };
}
