import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'koa';
import { projectRoot } from '../config';
import { defineOperation, type OperationGroup } from '../route-context';
import { pageHeaders } from '../http/page-headers';

/**
 * The page's files, read once at start. They live beside the TypeScript sources and are served as they are (no
 * build step); the Docker image copies this folder next to dist/ (see Dockerfile).
 */
export const ADMIN_STATIC_DIR = path.join(projectRoot, 'src', 'admin', 'static');

const ASSET_TYPES = {
  'admin.js': 'text/javascript; charset=utf-8',
  // The health view's SVG chart, a module admin.js imports.
  'chart.js': 'text/javascript; charset=utf-8',
  'admin.css': 'text/css; charset=utf-8',
} as const;

const HEADERS = pageHeaders();

/** A file of the page, served as it is; revalidated on every load (`no-cache`). */
function staticFile(route: string, name: string, type: string) {
  const body = readFileSync(path.join(ADMIN_STATIC_DIR, name));
  return defineOperation({
    method: 'get',
    path: route,
    access: 'public',
    summary: `Admin page: ${name}`,
    undocumented: true,
    cacheControl: 'no-cache',
    responses: { 200: { description: name, contentType: type } },
    async handle(ctx: Context) {
      ctx.set(HEADERS);
      ctx.type = type;
      ctx.body = body;
    },
  });
}

/**
 * The admin page: static HTML, script and styles that call the staff-only admin API with the user's own
 * credentials. Public, as any login page is: they hold no data.
 */
export const adminPageGroup = (): OperationGroup => ({
  prefix: '/admin',
  tag: 'admin page',
  description: 'The admin page’s files',
  operations: [
    defineOperation({
      method: 'get',
      path: '',
      access: 'public',
      summary: 'Admin page (redirect to /admin/)',
      undocumented: true,
      responses: { 302: { description: 'To /admin/' } },
      async handle(ctx) {
        ctx.redirect('/admin/');
      },
    }),
    staticFile('/', 'index.html', 'text/html; charset=utf-8'),
    ...Object.entries(ASSET_TYPES).map(([name, type]) => staticFile(`/assets/${name}`, name, type)),
  ],
});
