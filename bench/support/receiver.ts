import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** What the receiver learnt from one delivered envelope. */
export interface Receipt {
  eventId: number;
  atMs: number;
}

/**
 * The subscriber, inside the bench process so that send and receipt times are on one clock (performance.now()).
 * It answers 200 at once and keeps only the first receipt per transaction id (deliveries are at least once).
 * Lighter than src/demo/subscriber-server.ts (the tests' subscriber) on purpose: it keeps no bodies or headers of tens of thousands of requests.
 * `answerAfterMs`: a slow subscriber, which answers that long after a request has arrived (its receipt counts at
 * arrival).
 */
export class Receiver {
  readonly receipts = new Map<string, Receipt>();
  requests = 0;
  duplicates = 0;
  private readonly waiters = new Map<string, () => void>();
  private server?: http.Server;
  url = '';

  constructor(private readonly answerAfterMs = 0) {}

  async listen(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const atMs = performance.now();
        this.requests += 1;
        this.record(Buffer.concat(chunks).toString('utf8'), atMs);
        const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        if (this.answerAfterMs > 0) setTimeout(answer, this.answerAfterMs);
        else answer();
      });
    });
    this.server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks`;
  }

  private record(body: string, atMs: number): void {
    let envelope: { id: number; data?: { donation?: { payment?: { transaction_id?: string } } } };
    try {
      envelope = JSON.parse(body);
    } catch {
      return;
    }
    const key = envelope.data?.donation?.payment?.transaction_id;
    if (!key) return;
    if (this.receipts.has(key)) {
      this.duplicates += 1;
      return;
    }
    this.receipts.set(key, { eventId: envelope.id, atMs });
    const waiter = this.waiters.get(key);
    if (waiter) {
      this.waiters.delete(key);
      waiter();
    }
  }

  /** Resolves when the event of this transaction id has arrived. */
  arrival(key: string): Promise<void> {
    if (this.receipts.has(key)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(key, resolve));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
