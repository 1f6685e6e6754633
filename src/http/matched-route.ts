import type { Context } from 'koa';

interface RouterLayer {
  path: string | RegExp;
  methods: string[];
}

export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route pattern a request matched ("/admin/api/webhook-events/:id"), for logs and metric labels: a bounded
 * set, unlike raw paths. Read from the router's matched layers rather than `_matchedRoute`, which still names a
 * `router.use` prefix when a guard in it answered (401), and is unset on a 405.
 */
export function matchedRoute(ctx: Context): string {
  const layers = ((ctx as { matched?: RouterLayer[] }).matched ?? []).filter((layer) => layer.methods.length > 0);
  const route = layers.filter((layer) => layer.methods.includes(ctx.method)).pop() ?? layers.pop();
  return route ? String(route.path) : UNMATCHED_ROUTE;
}
