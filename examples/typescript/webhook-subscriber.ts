/*
 * An example webhook subscriber for the donation platform's events, as an integrator would write it
 * (docs/consuming-webhooks.md). It depends on Node and the official `standardwebhooks` package only; copy it and
 * replace the in-memory inbox and book by your database.
 *
 *   npm run build && WEBHOOK_SECRET=whsec_... PORT=4000 node dist/examples/typescript/webhook-subscriber.js
 *
 * What it does, in the order the guide explains:
 *   1. reads the body as the exact bytes that were signed and verifies `webhook-signature` (401 if it fails);
 *   2. stores the event in an inbox under its `id` (a duplicate is recognised there and stored once);
 *   3. answers 204 at once, before any work: only a durable inbox write must come before the answer;
 *   4. works later, from the inbox: books donations by their number, whichever of donation.completed and
 *      donation.reconciled arrives first, and ignores event types it does not know.
 */
import http from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export interface Envelope {
  id: number;
  event: string;
  created_at: string;
  environment: 'prod' | 'stage' | 'test';
  data: Record<string, unknown>;
}

/** Where received events wait for processing. In production: a table with the event id as primary key. */
export interface Inbox {
  /** Stores the event unless its id is there already; durable before it resolves. */
  add(envelope: Envelope): Promise<'added' | 'duplicate'>;
  /** Events not processed yet, in arrival order. */
  unprocessed(): Promise<Envelope[]>;
  markProcessed(id: number): Promise<void>;
}

export class MemoryInbox implements Inbox {
  readonly events = new Map<number, { envelope: Envelope; processed: boolean }>();

  async add(envelope: Envelope): Promise<'added' | 'duplicate'> {
    if (this.events.has(envelope.id)) return 'duplicate';
    this.events.set(envelope.id, { envelope, processed: false });
    return 'added';
  }

  async unprocessed(): Promise<Envelope[]> {
    return [...this.events.values()].filter((entry) => !entry.processed).map((entry) => entry.envelope);
  }

  async markProcessed(id: number): Promise<void> {
    const entry = this.events.get(id);
    if (entry) entry.processed = true;
  }
}

/** What this CRM keeps of a donation; `completed` and the payout may arrive in either order. */
export interface BookedDonation {
  id: string;
  environment: Envelope['environment'];
  amount: number;
  currency: string;
  paymentStatus: string;
  /** Set by donation.completed or donation.recurring_completed. */
  completedEventId?: number;
  /** Set by donation.reconciled, in the provider's payout currency. */
  payout?: { paidOut: number; fee: number; eventId: number };
}

interface DonationPayload {
  id: string;
  amount: number;
  currency: string;
  payment: { status: string; paid_out_amount?: number; fee_amount?: number };
}

/**
 * Creates or updates the donation by its number, so that donation.reconciled arriving before its donation.completed
 * (which the platform may still be retrying) loses nothing. Unknown event types are ignored.
 */
export function bookEvent(book: Map<string, BookedDonation>, envelope: Envelope): void {
  if (!envelope.event.startsWith('donation.')) return;
  const donation = envelope.data.donation as DonationPayload;
  const booked: BookedDonation = book.get(donation.id) ?? {
    id: donation.id,
    environment: envelope.environment,
    amount: donation.amount,
    currency: donation.currency,
    paymentStatus: donation.payment.status,
  };
  switch (envelope.event) {
    case 'donation.completed':
    case 'donation.recurring_completed':
      Object.assign(booked, { amount: donation.amount, paymentStatus: donation.payment.status, completedEventId: envelope.id });
      break;
    case 'donation.reconciled':
      booked.payout = { paidOut: donation.payment.paid_out_amount!, fee: donation.payment.fee_amount!, eventId: envelope.id };
      break;
    default:
      return;
  }
  book.set(donation.id, booked);
}

/** Bodies are a few KiB; anything far larger is not ours. */
const MAX_BODY_BYTES = 1024 * 1024;

function readBody(request: http.IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks).toString('utf8') : undefined));
    request.on('error', reject);
  });
}

export interface ExampleSubscriber {
  handle: http.RequestListener;
  inbox: Inbox;
  book: Map<string, BookedDonation>;
  /** Books every unprocessed event of the inbox; runs after each answer, and can be called at any time. */
  processPending(): Promise<void>;
}

/**
 * `secret`: the endpoint's signing secret as configured in the platform's admin, `whsec_` followed by base64.
 * (A secret without that prefix is used by the platform as its UTF-8 bytes: pass
 * `new TextEncoder().encode(secret)` with `{ format: 'raw' }` to the Webhook constructor instead.)
 */
export function createExampleSubscriber({ secret, inbox = new MemoryInbox() }: { secret: string; inbox?: Inbox }): ExampleSubscriber {
  const webhook = new Webhook(secret);
  const book = new Map<string, BookedDonation>();
  let processing = Promise.resolve();

  // One run at a time; an event that fails to book stays in the inbox for the next run.
  const processPending = () => {
    const run = processing.then(async () => {
      for (const envelope of await inbox.unprocessed()) {
        bookEvent(book, envelope);
        await inbox.markProcessed(envelope.id);
      }
    });
    processing = run.catch(() => undefined);
    return run;
  };

  const handle: http.RequestListener = (request, response) => {
    const answer = (status: number, text = '') => response.writeHead(status, { 'content-type': 'text/plain' }).end(text);
    if (request.method !== 'POST') return answer(405);
    void (async () => {
      const body = await readBody(request);
      if (body === undefined) return answer(413);
      let envelope: Envelope;
      try {
        // Verify the exact bytes received, before parsing: re-serialised JSON would not match the signature.
        envelope = webhook.verify(body, request.headers as Record<string, string>) as Envelope;
      } catch (err) {
        if (err instanceof WebhookVerificationError) return answer(401, err.message);
        throw err;
      }
      // Not 2xx unless stored: without the answer the platform retries, so nothing is lost.
      const stored = await inbox.add(envelope);
      answer(204);
      if (stored === 'added') {
        setImmediate(() => {
          processPending().catch((err: unknown) => console.error('booking failed; the event stays in the inbox', err));
        });
      }
    })().catch((err: unknown) => {
      if (!response.headersSent) answer(500, err instanceof Error ? err.message : 'error');
    });
  };

  return { handle, inbox, book, processPending };
}

if (require.main === module) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret configured for the endpoint (whsec_...)');
  const subscriber = createExampleSubscriber({ secret });
  const port = Number(process.env.PORT ?? 4000);
  http.createServer(subscriber.handle).listen(port, '127.0.0.1', () => {
    process.stdout.write(`Listening on http://127.0.0.1:${port}/webhooks\n`);
  });
}
