import { readFileSync } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import type { Context } from 'koa';
import { projectRoot } from '../config';

/**
 * The page's files, read once at start. They live beside the TypeScript sources and are served as they are (no
 * build step); the Docker image copies this folder next to dist/ (see Dockerfile).
 */
export const ADMIN_STATIC_DIR = path.join(projectRoot, 'src', 'admin', 'static');

const ASSET_TYPES = {
  'admin.js': 'text/javascript; charset=utf-8',
  'admin.css': 'text/css; charset=utf-8',
} as const;

/**
 * Scripts and styles only from this origin (no inline script can run, so an injected tag does nothing), API calls
 * only to this origin, no framing (clickjacking), no referrer towards the Temporal UI link.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

function staticFile(name: string, type: string) {
  const body = readFileSync(path.join(ADMIN_STATIC_DIR, name));
  return async function serveStatic(ctx: Context) {
    ctx.set(SECURITY_HEADERS);
    ctx.type = type;
    ctx.body = body;
  };
}

/** GET /admin/: the admin page (static HTML and script that call the staff-only admin API with the user's credentials). */
export function createAdminPageRouter(): Router {
  // Strict: /admin and /admin/ are different routes, so that the bare path can redirect to the page.
  const router = new Router({ strict: true });
  router.get('/admin', async function redirectToAdminPage(ctx: Context) {
    ctx.redirect('/admin/');
  });
  router.get('/admin/', staticFile('index.html', 'text/html; charset=utf-8'));
  for (const [name, type] of Object.entries(ASSET_TYPES)) {
    router.get(`/admin/assets/${name}`, staticFile(name, type));
  }
  return router;
}
