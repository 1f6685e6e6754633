import { readdirSync, readFileSync } from 'node:fs';
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

/** The page's scripts and style sheet, by kind; nothing else in the folder is served (index.html is `/admin/`). */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * The scripts and style sheets, by their path below the folder (`admin.js`, `views/events.js`), found once at start.
 * Each becomes a route of its own, so a request can reach only these files, whatever its spelling (`..`, `%2F`,
 * another case: no such route). Links are not followed: a file is served only if it is in the folder.
 */
function assets(): { name: string; type: string }[] {
  return readdirSync(ADMIN_STATIC_DIR, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && Object.hasOwn(CONTENT_TYPES, path.extname(entry.name)))
    .map((entry) => {
      const name = path.relative(ADMIN_STATIC_DIR, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
      return { name, type: CONTENT_TYPES[path.extname(name)] };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

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
    ...assets().map(({ name, type }) => staticFile(`/assets/${name}`, name, type)),
  ],
});
