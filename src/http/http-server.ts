import { createServer, type Server } from 'node:http';
import type Koa from 'koa';
import { answerClientErrors } from './client-errors';

/** How long a client may take to send a request: its request line and headers, then its body. */
export interface RequestTimeouts {
  headersSeconds: number;
  bodySeconds: number;
}

/**
 * The HTTP server of an app, with the refusals of src/http/client-errors.ts and both time limits. The app's body
 * reader answers a body that is late with a 408 (src/http/body.ts; the app sets its limit); Node's whole-request
 * limit, headers and body together, ends a request whose body nothing reads (an operation that takes none, or a
 * refusal before it was read). Node checks that limit on an interval, 30 s by default: once a second keeps it close
 * to what the settings say.
 */
export function createHttpServer(app: Koa, timeouts: RequestTimeouts): Server {
  const handle = app.callback();
  const server = createServer(
    {
      headersTimeout: timeouts.headersSeconds * 1000,
      requestTimeout: (timeouts.headersSeconds + timeouts.bodySeconds) * 1000,
      connectionsCheckingInterval: 1000,
    },
    (req, res) => void handle(req, res),
  );
  return answerClientErrors(server);
}
