import { createReadStream } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import { OPENAPI_JSON_PATH } from './document';

/** Swagger UI is served from the npm package's files: the service works without any internet access. */
const assetsDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));

// Only these files are served, so no request path can reach anything else on disk.
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

export const SWAGGER_UI_PATHS = ['/api/swagger', '/api/v1/swagger'];

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

const initializer = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_JSON_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
};
`;

/** The OpenAPI JSON at a stable path, and Swagger UI at /api/swagger/ and /api/v1/swagger/. */
export function documentationRouter(document: object): Router {
  const router = new Router();
  const json = JSON.stringify(document);
  router.get(OPENAPI_JSON_PATH, async function openApiJson(ctx) {
    ctx.type = 'application/json';
    ctx.body = json;
  });
  for (const base of SWAGGER_UI_PATHS) {
    router.get(base, async function swaggerUi(ctx) {
      // The page loads its files by relative URL, which needs the trailing slash.
      if (!ctx.path.endsWith('/')) {
        ctx.status = 301;
        ctx.redirect(`${base}/`);
        return;
      }
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = indexHtml;
    });
    router.get(`${base}/swagger-initializer.js`, async function swaggerInitializer(ctx) {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = initializer;
    });
    router.get(`${base}/:asset`, async function swaggerAsset(ctx, next) {
      const type = Object.hasOwn(ASSETS, ctx.params.asset) ? ASSETS[ctx.params.asset] : undefined;
      if (!type) return next();
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = createReadStream(path.join(assetsDir, ctx.params.asset));
    });
  }
  return router;
}
