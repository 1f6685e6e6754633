import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { HttpExchange } from '../src/webhooks/delivery-outcome';
import { bareHost, isPrivateAddress } from '../src/webhooks/endpoint-rules';
import { checkedLookup, type ResolveHost, SubscriberAddressRefused } from '../src/webhooks/subscriber-address';

export interface PostOptions {
  /** One deadline for the whole exchange: connecting, sending, the status line and reading the body. */
  timeoutMs: number;
  /** Reading stops here; the rest of the body is never buffered. */
  maxBodyBytes: number;
  /** Where the host name is resolved, and whether non-public addresses may be reached (development only). */
  addresses: { resolve: ResolveHost; allowPrivateAddresses: boolean };
}

/**
 * One POST, reported as what happened on the wire. Never throws and never follows redirects. The host is resolved
 * once, inside the deadline, every address checked, and the socket connects to a checked one (no DNS rebinding).
 * Built on node:http rather than fetch: fetch refuses some ports, adds browser headers and decompresses bodies, and
 * here every byte on the wire should be ours. A fresh connection per attempt (agent: false), so that a stale keep-alive socket can
 * never turn into a failed attempt.
 */
export function postRequest(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  options: PostOptions,
): Promise<HttpExchange> {
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
  const literal = bareHost(target.hostname);
  if (net.isIP(literal) && !options.addresses.allowPrivateAddresses && isPrivateAddress(literal)) {
    return Promise.resolve({ kind: 'not-sent', reason: `${literal} is a private, loopback or link-local address` });
  }

  return new Promise((resolve) => {
    let settled = false;
    let response: { status: number; location?: string; chunks: Buffer[]; size: number } | undefined;
    const finish = (exchange?: HttpExchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(
        exchange ??
          (response
            ? { kind: 'response', status: response.status, location: response.location, body: Buffer.concat(response.chunks) }
            : { kind: 'connection-error', message: 'connection closed before a response' }),
      );
      request.destroy();
    };

    let request: http.ClientRequest;
    try {
      request = transport.request(target, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length) },
        agent: false,
        lookup: checkedLookup(options.addresses),
      });
    } catch (err) {
      resolve({ kind: 'not-sent', reason: (err as Error).message });
      return;
    }
    // A status line that arrived in time decides the outcome; a body still trickling in at the deadline is cut.
    const deadline = setTimeout(() => finish(response ? undefined : { kind: 'timeout', timeoutMs: options.timeoutMs }), options.timeoutMs);

    request.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof SubscriberAddressRefused) finish({ kind: 'not-sent', reason: err.message });
      else finish(response ? undefined : { kind: 'connection-error', message: err.message });
    });
    request.on('response', (res) => {
      const location = res.headers.location;
      response = { status: res.statusCode ?? 0, location, chunks: [], size: 0 };
      const received = response;
      res.on('data', (chunk: Buffer) => {
        const room = options.maxBodyBytes - received.size;
        if (room > 0) {
          const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
          received.chunks.push(part);
          received.size += part.length;
        }
        if (received.size >= options.maxBodyBytes) finish();
      });
      res.on('end', () => finish());
      res.on('error', () => finish());
      res.on('close', () => finish());
    });
    request.end(body);
  });
}
