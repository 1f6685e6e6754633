import type Router from '@koa/router';
import type Koa from 'koa';
import { declarationOf, type MountedRoute } from '../../src/http/mount';

/** The one router of the app, found among its middleware (koa-router marks its dispatcher with the router). */
export function routerOf(app: Koa): Router {
  const routers = app.middleware
    .map((middleware) => (middleware as { router?: Router }).router)
    .filter((found): found is Router => found !== undefined);
  if (routers.length !== 1) throw new Error(`expected one router, found ${routers.length}`);
  return routers[0];
}

/** Every route the app's router answers that was declared as an operation (OPTIONS of CORS routes included). */
export function declaredRoutes(app: Koa): MountedRoute[] {
  return routerOf(app).stack.flatMap((layer) => declarationOf(layer) ?? []);
}
