import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import type { PemPair } from './certificates';

export interface TlsFrontOptions {
  /** The plain-text Temporal frontend behind it. */
  target: { host: string; port: number };
  /** The front's own certificate. */
  server: PemPair;
  /** When set, the front requires a client certificate signed by this CA, as a Temporal frontend with mTLS does. */
  clientCa?: string;
}

export interface TlsFront {
  address: string;
  /** The common names of the client certificates of the connections the front let through. */
  clients(): string[];
  /** How the connections that were refused ended: the TLS error of each. */
  refusals(): string[];
  close(): Promise<void>;
}

/**
 * A TLS listener in front of a plain Temporal frontend, the way a cluster with TLS (or mTLS) on its frontend looks to
 * a client: it verifies the client certificate when asked to and pipes the decrypted bytes through. It negotiates
 * HTTP/2 (ALPN h2), as gRPC clients require.
 */
export async function startTlsFront({ target, server, clientCa }: TlsFrontOptions): Promise<TlsFront> {
  const clients: string[] = [];
  const refusals: string[] = [];
  const sockets = new Set<net.Socket>();
  const front = tls.createServer(
    { cert: server.cert, key: server.key, ALPNProtocols: ['h2'], requestCert: clientCa !== undefined, rejectUnauthorized: true, ca: clientCa },
    (socket) => {
      const peer = socket.getPeerCertificate();
      if (clientCa !== undefined) clients.push(String(peer.subject?.CN));
      const upstream = net.connect(target.port, target.host);
      for (const end of [socket, upstream]) {
        sockets.add(end);
        end.on('close', () => sockets.delete(end));
        end.on('error', () => undefined);
      }
      socket.pipe(upstream).pipe(socket);
      socket.on('close', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
    },
  );
  front.on('tlsClientError', (err) => refusals.push(err.message));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(front.address() as net.AddressInfo).port}`,
    clients: () => [...clients],
    refusals: () => [...refusals],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        front.close(() => resolve());
      }),
  };
}

export interface RecordingEndpoint {
  address: string;
  /** The gRPC method and the `authorization` header of every call received. */
  calls(): Array<{ path: string; authorization?: string }>;
  close(): Promise<void>;
}

/**
 * A fake Temporal frontend over TLS that records what each gRPC call carries and refuses it as a frontend with an
 * authorizer refuses a bad key (UNAUTHENTICATED): to see what an API key becomes on the wire.
 */
export async function startRecordingEndpoint(server: PemPair): Promise<RecordingEndpoint> {
  const calls: Array<{ path: string; authorization?: string }> = [];
  const endpoint = http2.createSecureServer({ cert: server.cert, key: server.key });
  const sessions = new Set<http2.ServerHttp2Session>();
  endpoint.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  endpoint.on('stream', (stream, headers) => {
    calls.push({ path: String(headers[':path']), authorization: headers.authorization });
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'recorded' }, { endStream: true });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(endpoint.address() as net.AddressInfo).port}`,
    calls: () => [...calls],
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        endpoint.close(() => resolve());
      }),
  };
}
