import { performance } from 'node:perf_hooks';
import type { Receiver } from './receiver';

/** One platform call as the donation form makes it: a single CHF card donation by a new donor. */
export function checkoutBody(transactionId: string): string {
  return JSON.stringify({
    environment: 'PRODUCTION',
    currency: 'CHF',
    donor: {
      gender: 'female',
      first_name: 'Anna',
      last_name: 'Bench',
      email: `${transactionId}@example.org`,
      street: 'Bahnhofstrasse',
      street_number: '12',
      postal_code: '8001',
      city: 'Zürich',
      country: 'CH',
      language: 'de',
      newsletter: true,
      custom_fields: { Anlass: 'Benchmark' },
    },
    positions: [{ amount: 50, purpose: 'Brunnenbau' }],
    payment: { transaction_id: transactionId, method: 'VIS', status: 'completed' },
  });
}

export interface EventTiming {
  key: string;
  /** When the call was due (open loop) or sent (closed loop), performance.now() ms. */
  sentAt: number;
  /** Whether the system took the event (the platform call's 201, the workflow start), and when it answered. */
  accepted?: boolean;
  answeredAt?: number;
}

/** Hands one event, named by `key`, to the system under test; resolves true when it took it. */
export type Offer = (key: string) => Promise<boolean>;

/** The platform call as the donation form makes it; the event's transaction id is `key`. */
export function platformCall(apiUrl: string, token: () => string): Offer {
  return async (key) => {
    try {
      const response = await fetch(`${apiUrl}/platform/checkouts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}` },
        body: checkoutBody(key),
      });
      await response.arrayBuffer();
      return response.status === 201;
    } catch {
      return false;
    }
  };
}

/**
 * Offers events and keeps their timings; latency = receipt at the subscriber minus send time. The events are platform
 * calls for the service, workflow starts for the trivial-workflow ceiling (bench/ceiling.ts).
 */
export class EventLoad {
  readonly timings: EventTiming[] = [];
  failures = 0;
  private counter = 0;

  /** `awaitArrival: false`: the closed loop offers the next event once the last is answered (platform calls alone). */
  constructor(
    private readonly offer: Offer,
    private readonly receiver: Receiver,
    private readonly runId: string,
    private readonly awaitArrival = true,
  ) {}

  /** An event now; `dueAt` is the intended send time (open loop) so that a late send counts as latency. */
  async send(dueAt = performance.now()): Promise<EventTiming> {
    const key = `${this.runId}-${++this.counter}`;
    const timing: EventTiming = { key, sentAt: dueAt };
    this.timings.push(timing);
    timing.accepted = await this.offer(key);
    timing.answeredAt = performance.now();
    if (!timing.accepted) this.failures += 1;
    return timing;
  }

  /**
   * Open loop: `rate` events per second for `durationS`, each sent when due whatever the previous ones are doing
   * (a backlog shows up as latency, not as a lower offered rate). With a lead-in, the same rate runs `leadInS` first,
   * unmeasured: only the events due after it are answered, and `measuring` is called when the first of them is due.
   */
  async openLoop(rate: number, durationS: number, { leadInS = 0, measuring = () => undefined }: { leadInS?: number; measuring?: () => void } = {}): Promise<EventTiming[]> {
    const leadIn = Math.round(rate * leadInS);
    const count = leadIn + Math.round(rate * durationS);
    const start = performance.now();
    const sends: Array<Promise<EventTiming>> = [];
    for (let i = 0; i < count; i++) {
      const dueAt = start + (i * 1000) / rate;
      const wait = dueAt - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      if (i === leadIn) measuring();
      const sent = this.send(dueAt);
      if (i >= leadIn) sends.push(sent);
    }
    return Promise.all(sends);
  }

  /**
   * Closed loop end to end: `concurrency` donors, each offering an event and waiting until it reached the subscriber
   * before the next, for `durationS`. Its rate is the most the system sustains with that many events in flight.
   */
  async closedLoop(concurrency: number, durationS: number): Promise<EventTiming[]> {
    const endAt = performance.now() + durationS * 1000;
    const mine: EventTiming[] = [];
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < endAt) {
          const timing = await this.send();
          mine.push(timing);
          if (timing.accepted && this.awaitArrival) await this.receiver.arrival(timing.key);
        }
      }),
    );
    return mine;
  }
}

export interface PhaseResult {
  sent: number;
  delivered: number;
  failedCalls: number;
  /** Deliveries per second between the first send and the last receipt. */
  ratePerS: number;
  latenciesMs: number[];
  apiLatenciesMs: number[];
}

/** Rate and latency of a phase whose events ended at `endOf` (an accepted event without an end is not counted). */
function measured(timings: EventTiming[], endOf: (timing: EventTiming) => number | undefined): PhaseResult {
  const accepted = timings.filter((timing) => timing.accepted);
  const ends = accepted.map((timing) => ({ timing, end: endOf(timing) })).filter((item): item is { timing: EventTiming; end: number } => item.end !== undefined);
  const firstSend = Math.min(...timings.map((timing) => timing.sentAt));
  const lastEnd = Math.max(0, ...ends.map(({ end }) => end));
  return {
    sent: timings.length,
    delivered: ends.length,
    failedCalls: timings.length - accepted.length,
    ratePerS: ends.length / ((lastEnd - firstSend) / 1000),
    latenciesMs: ends.map(({ timing, end }) => end - timing.sentAt),
    apiLatenciesMs: timings.filter((t) => t.answeredAt !== undefined).map((t) => t.answeredAt! - t.sentAt),
  };
}

/** A phase measured by the answers to its offers alone (platform calls without delivery): their rate and latency. */
export const answered = (timings: EventTiming[]): PhaseResult => measured(timings, (timing) => timing.answeredAt);

/** Waits until every accepted event of a phase has been delivered (or `timeoutS` passed), then measures it. */
export async function settle(receiver: Receiver, timings: EventTiming[], timeoutS: number): Promise<PhaseResult> {
  const deadline = performance.now() + timeoutS * 1000;
  while (timings.some((timing) => timing.accepted && !receiver.receipts.has(timing.key)) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return measured(timings, (timing) => receiver.receipts.get(timing.key)?.atMs);
}

/** A phase's end for a delivering system: its accepted events arrived at the subscriber (or `timeoutS` passed). */
export const untilArrived = (receiver: Receiver, timeoutS: number) => (timings: EventTiming[]) => settle(receiver, timings, timeoutS);
