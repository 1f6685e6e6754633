import http from 'node:http';
import https from 'node:https';
import type { HttpExchange } from '../src/webhooks/delivery-outcome';
import { checkSubscriberHost, pinnedLookup, type ResolveHost } from '../src/webhooks/subscriber-address';
import type { SubscriberConnections } from './subscriber-connections';

export interface PostOptions {
  /** One deadline for the whole exchange: resolving, connecting, sending, the status line and reading the body. */
  timeoutMs: number;
  /** Reading stops here; the rest of the body is never buffered. */
  maxBodyBytes: number;
  /** Where the host name is resolved, and whether non-public addresses may be reached (development only). */
  addresses: { resolve: ResolveHost; allowPrivateAddresses: boolean };
  /** Kept-alive connections to reuse; without it, a fresh connection per POST. */
  connections?: SubscriberConnections;
}

/**
 * Errors of a kept-alive socket that the subscriber closed while it lay idle: the request almost surely never reached
 * it. (A subscriber that took the request and then reset the connection without answering gets it a second time;
 * deliveries are at least once, and the envelope id tells the repeat.)
 */
const STALE_SOCKET_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * One POST, reported as what happened on the wire. Never throws and never follows redirects. The host is resolved
 * once, inside the deadline, every address checked, and the socket connects to a checked one (no DNS rebinding); a
 * kept-alive connection is reused only by a POST whose own check gave the same addresses (SubscriberConnections).
 * Built on node:http rather than fetch: fetch refuses some ports, adds browser headers and decompresses bodies, and
 * here every byte on the wire should be ours.
 */
export function postRequest(url: string, headers: Record<string, string>, body: Buffer, options: PostOptions): Promise<HttpExchange> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ kind: 'not-sent', reason: 'the endpoint URL is not a valid URL' });
  }
  const transport = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
  if (!transport) {
    return Promise.resolve({ kind: 'not-sent', reason: `unsupported URL scheme ${target.protocol}` });
  }
  // Stored before the endpoint rules refused it: Node would send to the scheme's default port instead.
  if (target.port === '0') return Promise.resolve({ kind: 'not-sent', reason: 'the endpoint URL has port 0' });

  return new Promise((resolve) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    /** `keepConnection`: the answer was read to its end, so the connection may serve the next POST. */
    const finish = (exchange: HttpExchange, { keepConnection = false } = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(exchange);
      if (!keepConnection) request?.destroy();
    };
    // A status line that arrived in time decides the outcome; a body still trickling in at the deadline is cut.
    let cutBody: (() => void) | undefined;
    const deadline = setTimeout(() => (cutBody ? cutBody() : finish({ kind: 'timeout', timeoutMs: options.timeoutMs })), options.timeoutMs);

    checkSubscriberHost(target.hostname, options.addresses).then(
      (check) => {
        if (settled) return;
        if (!check.ok) {
          finish(check.refused ? { kind: 'not-sent', reason: check.reason } : { kind: 'connection-error', message: check.reason });
          return;
        }
        const send = (agent: http.Agent | false, mayRetry: boolean) => {
          try {
            request = transport.request(target, {
              method: 'POST',
              headers: { ...headers, 'content-length': String(body.length) },
              agent,
              lookup: pinnedLookup(check.addresses),
            });
          } catch (err) {
            finish({ kind: 'not-sent', reason: (err as Error).message });
            return;
          }
          const sent = request;
          sent.on('error', (err: NodeJS.ErrnoException) => {
            // Settled: the deadline destroyed this request (which then fails with ECONNRESET); nothing is sent again.
            if (settled || cutBody) return;
            // Node's advice for kept-alive sockets: a request on a reused socket that the subscriber had closed is
            // sent once more, on a connection of its own (another pooled one may be just as stale), before any answer.
            if (mayRetry && sent.reusedSocket && STALE_SOCKET_ERRORS.has(err.code ?? '')) send(false, false);
            else finish({ kind: 'connection-error', message: err.message });
          });
          sent.on('response', (res) => {
            const response = { status: res.statusCode ?? 0, location: res.headers.location, chunks: [] as Buffer[], size: 0 };
            // `ended`: the body was read to its end, so the connection may serve the next POST.
            const answered = (ended = false) =>
              finish(
                { kind: 'response', status: response.status, location: response.location, body: Buffer.concat(response.chunks), complete: ended },
                { keepConnection: ended },
              );
            cutBody = answered;
            res.on('data', (chunk: Buffer) => {
              const room = options.maxBodyBytes - response.size;
              if (room > 0) {
                const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
                response.chunks.push(part);
                response.size += part.length;
              }
              if (response.size >= options.maxBodyBytes) answered();
            });
            res.on('end', () => answered(true));
            res.on('error', () => answered());
            res.on('close', () => answered());
          });
          sent.end(body);
        };
        send(options.connections?.agentFor(target, check.addresses) ?? false, true);
      },
      (err: Error) => finish({ kind: 'connection-error', message: err.message }),
    );
  });
}
