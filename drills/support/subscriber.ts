import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The drill's subscriber: answers 200 after `delayMs` (503 to the first `failuresPerEvent` requests of each envelope
 * id, or every request with the status of answerWith()), and counts every request per envelope id.
 */
export interface RecordingSubscriber {
  url: string;
  /** Requests per envelope id; beyond the failures asked for, more than one is a duplicate delivery. */
  received: Map<number, number>;
  total(): number;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /** From now on, every request is answered with this status (an outage of the subscriber); undefined: as before. */
  answerWith(status: number | undefined): void;
  close(): Promise<void>;
}

export async function startRecordingSubscriber({ delayMs, failuresPerEvent = 0 }: { delayMs: number; failuresPerEvent?: number }): Promise<RecordingSubscriber> {
  const received = new Map<number, number>();
  let total = 0;
  let inFlight = 0;
  let forcedStatus: number | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      total += 1;
      inFlight += 1;
      const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number };
      const count = (received.get(id) ?? 0) + 1;
      received.set(id, count);
      setTimeout(() => {
        inFlight -= 1;
        const status = forcedStatus ?? (count > failuresPerEvent ? 200 : 503);
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'try later');
      }, delayMs);
    });
    res.on('error', () => undefined);
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    total: () => total,
    inFlight: () => inFlight,
    answerWith: (status) => (forcedStatus = status),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
