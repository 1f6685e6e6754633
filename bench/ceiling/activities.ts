import { ApplicationFailure } from '@temporalio/activity';
import { DEFAULT_HTTP_SETTINGS } from '../../activities/delivery-activities';
import { postRequest } from '../../activities/http-post';
import { SubscriberConnections } from '../../activities/subscriber-connections';
import type { Db } from '../../src/db/knex';
import { recordAttempt, startAttempt } from '../../src/webhook-events/attempts';
import { RESPONSE_BODY_LIMIT_BYTES } from '../../src/webhooks/delivery-outcome';
import { systemResolver } from '../../src/webhooks/subscriber-address';

/** What the ceiling's worker process prints when it polls (bench/ceiling/worker.ts; not imported from there, it runs). */
export const CEILING_READY_MESSAGE = 'ceiling worker running';

/** The bench subscriber's credentials (bench/support/stack.ts configures the service's endpoint with the same). */
export const BENCH_SUBSCRIBER_AUTHORIZATION = `Basic ${Buffer.from('crm:bench-subscriber-password').toString('base64')}`;

/** The headers a delivery sends to the bench subscriber (no signing secret there). */
export const benchDeliveryHeaders = {
  'content-type': 'application/json',
  'user-agent': DEFAULT_HTTP_SETTINGS.userAgent,
  authorization: BENCH_SUBSCRIBER_AUTHORIZATION,
};

/** Kept-alive connections, as a delivery worker keeps them. */
const connections = new SubscriberConnections();

/** POSTs a body to the bench subscriber as an attempt does: the same HTTP function, connections, limits and address check. */
export function postToSubscriber(url: string, body: Buffer) {
  return postRequest(url, benchDeliveryHeaders, body, {
    timeoutMs: DEFAULT_HTTP_SETTINGS.timeoutMs,
    maxBodyBytes: RESPONSE_BODY_LIMIT_BYTES,
    // The subscriber is on loopback, which a delivery allows outside production.
    addresses: { resolve: systemResolver, allowPrivateAddresses: true },
    connections,
  });
}

const answered = (exchange: Awaited<ReturnType<typeof postToSubscriber>>): number => {
  if (exchange.kind === 'response' && exchange.status >= 200 && exchange.status < 300) return exchange.status;
  throw ApplicationFailure.retryable(`subscriber: ${JSON.stringify(exchange)}`, 'SubscriberFailed');
};

/**
 * The ceiling's activities: `post` POSTs the body (anything but a 2xx is retried like an infrastructure error);
 * `attemptFromOutbox`, with the service's database (the `floor-outbox` system), makes an event's first attempt with
 * the service's statements: the event read with the attempt's start, then the outcome recorded with the status.
 */
export function createCeilingActivities(subscriberUrl: string, outbox?: Db) {
  return {
    async post(body: string): Promise<number> {
      return answered(await postToSubscriber(subscriberUrl, Buffer.from(body, 'utf8')));
    },
    async attemptFromOutbox(eventId: number): Promise<number> {
      if (!outbox) throw new Error('attemptFromOutbox needs the outbox database');
      const startedAt = new Date();
      const event = await startAttempt(outbox, { eventId, attemptNumber: 1, manual: false, startedAt, eventKey: null });
      if (!event) throw new Error(`event ${eventId} not found`);
      const responseCode = answered(await postToSubscriber(subscriberUrl, Buffer.from(event.payload, 'utf8')));
      const result = { outcome: 'delivered' as const, responseCode, error: null, startedAtMs: startedAt.getTime(), durationMs: Date.now() - startedAt.getTime() };
      await recordAttempt(outbox, {
        eventId,
        attemptNumber: 1,
        attempt: { kind: 'scheduled', number: 1, outcome: 'delivered' },
        result,
        responseBody: null,
        retryDelayMs: 5 * 60_000,
      });
      return responseCode;
    },
  };
}

export type CeilingActivities = ReturnType<typeof createCeilingActivities>;
