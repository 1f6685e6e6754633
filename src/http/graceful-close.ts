import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net from 'node:net';

/**
 * How an HTTP server of this service stops without failing a request that a proxy in front of it already sent:
 *
 * - it stops accepting connections at once: the proxy's next connection is refused, and Caddy retries a request
 *   whose connection was refused on another replica (for any method) and leaves this one out meanwhile;
 * - every answer from then on says `Connection: close` (where its headers are not out yet), so the proxy sends
 *   nothing more on that connection, and requests under way finish;
 * - a kept-alive connection that is idle is not cut. Node's `server.close()` would cut it at once, and with it a
 *   request the proxy has just written to it that the busy event loop has not read yet: the proxy answers that with
 *   a 502 and does not retry a POST. Such a connection serves what still comes on it (with `Connection: close`) and
 *   ends at the keep-alive timeout (`server.keepAliveTimeout`, 5 s), as any idle connection does.
 *
 * Call it on the server with its request handler attached; it returns what stops the server, resolving once every
 * connection has ended.
 */
export function closeGracefully(server: Server): () => Promise<void> {
  let stopping = false;
  const unanswered = new Set<ServerResponse>();
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (stopping) {
      res.setHeader('Connection', 'close');
      return;
    }
    unanswered.add(res);
    res.once('close', () => unanswered.delete(res));
  });
  return () =>
    new Promise<void>((resolve) => {
      stopping = true;
      for (const res of unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
      // net.Server's close: stops listening and waits for the connections, without http.Server's cutting of idle ones.
      if (!server.listening) return resolve();
      net.Server.prototype.close.call(server, () => resolve());
    });
}
