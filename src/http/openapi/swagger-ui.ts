import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { Context } from 'koa';
import { type Operation, type OperationGroup, operationsReceiving } from '../operation';
import { pageHeaders } from '../page-headers';

/** Swagger UI is served from the npm package's files: the service works without any internet access. */
const assetsDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));

export const OPENAPI_JSON_PATH = '/api/openapi.json';

// Only these files are served, so no request path can reach anything else on disk.
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

// These handlers need nothing of the app's route context.
const defineOperation = operationsReceiving<unknown>();

export const SWAGGER_UI_PATHS = ['/api/swagger', '/api/v1/swagger'];

// Swagger UI sets style attributes in its markup (SVG icons, layout), which `style-src 'self'` would drop.
const HEADERS = pageHeaders({ styleSrc: "'self' 'unsafe-inline'" });

const indexHtml = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Donation API</title>
  <link rel="stylesheet" href="swagger-ui.css">
  <link rel="icon" type="image/png" href="favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="swagger-ui-bundle.js"></script>
  <script src="swagger-initializer.js"></script>
</body>
</html>
`;

// No persistAuthorization: credentials typed into "Authorize" stay in the page's memory, never in localStorage,
// where they would outlive the tab on an origin that also serves the admin page.
const initializer = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_JSON_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
};
`;

function page(route: string, summary: string, type: string, body: () => string | NodeJS.ReadableStream, cacheControl?: string): Operation<unknown> {
  return defineOperation({
    method: 'get',
    path: route,
    access: 'public',
    summary,
    undocumented: true,
    cacheControl,
    responses: { 200: { description: summary, contentType: type } },
    async handle(ctx: Context) {
      ctx.set(HEADERS);
      ctx.type = type;
      ctx.body = body();
    },
  });
}

/** The OpenAPI document at a stable path, and Swagger UI at /api/swagger/ and /api/v1/swagger/. */
export function documentationGroup(document: object): OperationGroup<unknown> {
  const json = JSON.stringify(document);
  const operations: Operation<unknown>[] = [
    defineOperation({
      method: 'get',
      path: OPENAPI_JSON_PATH,
      access: 'public',
      summary: 'This OpenAPI document',
      undocumented: true,
      responses: { 200: { description: 'OpenAPI 3.1' } },
      async handle(ctx) {
        ctx.type = 'application/json';
        ctx.body = json;
      },
    }),
  ];
  for (const base of SWAGGER_UI_PATHS) {
    operations.push(
      defineOperation({
        method: 'get',
        path: base,
        access: 'public',
        summary: 'Swagger UI (redirect)',
        undocumented: true,
        responses: { 301: { description: 'The page loads its files by relative URL, which needs the trailing slash' } },
        async handle(ctx) {
          ctx.status = 301;
          ctx.redirect(`${base}/`);
        },
      }),
      page(`${base}/`, 'Swagger UI', 'text/html; charset=utf-8', () => indexHtml),
      page(`${base}/swagger-initializer.js`, 'Swagger UI set-up', 'application/javascript; charset=utf-8', () => initializer),
      ...Object.entries(ASSETS).map(([asset, type]) =>
        page(`${base}/${asset}`, `Swagger UI: ${asset}`, type, () => createReadStream(path.join(assetsDir, asset)), 'public, max-age=3600'),
      ),
    );
  }
  return { prefix: '', tag: 'documentation', description: 'The OpenAPI document and Swagger UI', operations };
}
