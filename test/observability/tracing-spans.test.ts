import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createDeliveryActivities } from '../../activities/delivery-activities';
import type { TracingSettings } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { type ReceivedRequest, type Reply, startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createLogger } from '../../src/logger';
import { startTracing, type Tracing } from '../../src/observability/tracing/start-tracing';
import { queryWithoutValues, urlWithoutSecrets } from '../../src/observability/tracing/spans';
import { currentTraceContext, inTraceContext, linkedToTrace, traceLogFields } from '../../src/tracing';
import { runActivity } from '../support/activity-run';
import { createTestDatabase } from '../support/database';
import { insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

// The spans of ours, in this process with the tracing the start command switches on and an in-memory exporter. A
// resend links to the event's trace, a start joins it. Delivery attempts: the HTTP client attributes of the semantic conventions, `traceparent` to the subscriber only when
// WEBHOOK_SEND_TRACEPARENT says so, and the trace's ids on log lines. The activity runs inside a span of the test's,
// as the worker's activity interceptor runs it inside RunActivity.

const SETTINGS: TracingSettings = {
  exporter: 'otlp',
  tracesUrl: 'http://127.0.0.1:1/v1/traces',
  protocol: 'http/json',
  resourceAttributes: {},
  sampler: 'parentbased_always_on',
  samplerRatio: 1,
};

let db: Db;
let subscriber: Subscriber;
let replies: (request: ReceivedRequest) => Reply;
let tracing: Tracing;
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  subscriber = await startSubscriber({ reply: (request) => replies(request) });
  tracing = startTracing(SETTINGS, { serviceName: 'tracing-test', serviceVersion: '0.0.0', exporter });
});

beforeEach(() => {
  replies = () => ({ status: 200, body: 'ok' });
  exporter.reset();
});

afterAll(async () => {
  await tracing?.shutdown();
  await subscriber?.close();
  await db?.destroy();
});

const firstAttempt = (eventId: number) => ({ eventId, attemptNumber: 1, attempt: { kind: 'scheduled', number: 1 } as const, retryDelayMs: 60_000 });

/** One attempt of a new event to `url`, inside a span of the test's; answers that span's context and the CLIENT span. */
async function attemptInSpan(url: string, sendTraceparent: boolean, log = createLogger('silent')) {
  const event = await insertEvent(db, await insertEndpoint(db, { url }));
  const activities = createDeliveryActivities({ db, log, http: { timeoutMs: 2000 }, allowPrivateAddresses: true, keyring: TEST_KEYRING, sendTraceparent });
  const parent = await trace.getTracer('test').startActiveSpan('RunActivity:attemptDelivery', async (span) => {
    await runActivity(`webhook-event-${event.id}`, activities.attemptDelivery, firstAttempt(event.id));
    span.end();
    return span.spanContext();
  });
  const attempts = exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT && span.name === 'POST');
  expect(attempts).toHaveLength(1);
  return { event, parent, attempt: attempts[0] };
}

test('a delivered attempt is a CLIENT span POST under the activity, with the HTTP client attributes and no error', async () => {
  const { event, parent, attempt } = await attemptInSpan(`${subscriber.url}`, false);
  expect(attempt.spanContext().traceId).toBe(parent.traceId);
  expect(attempt.parentSpanContext?.spanId).toBe(parent.spanId);
  const port = Number(new URL(subscriber.url).port);
  expect(attempt.attributes).toEqual({
    'http.request.method': 'POST',
    'url.full': subscriber.url,
    'server.address': '127.0.0.1',
    'server.port': port,
    'http.response.status_code': 200,
    'webhook.event.id': event.id,
    'webhook.attempt': 1,
  });
  expect(attempt.status.code).toBe(SpanStatusCode.UNSET);
});

test('a failed attempt carries error.type: the status code of the answer, or why none came', async () => {
  replies = () => ({ status: 503, body: 'down' });
  const answered = (await attemptInSpan(subscriber.url, false)).attempt;
  expect(answered.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
  expect(answered.status.code).toBe(SpanStatusCode.ERROR);

  exporter.reset();
  // Nothing listens on port 1 of loopback: the connection is refused.
  const refused = (await attemptInSpan('http://127.0.0.1:1/hook', false)).attempt;
  expect(refused.attributes['error.type']).toBe('connection-error');
  expect(refused.attributes['http.response.status_code']).toBeUndefined();
  expect(refused.attributes['server.port']).toBe(1);
});

test('url.full shows no credentials, no query value and no fragment', () => {
  expect(urlWithoutSecrets(new URL('https://user:pass@crm.example.org:8443/hooks?token=s3cret&x=1&token=again#part'))).toBe(
    'https://crm.example.org:8443/hooks?token=REDACTED&x=REDACTED',
  );
});

test('a query shows its names, never its values (the server span\'s url.query, the attempt\'s url.full)', () => {
  expect(queryWithoutValues('?email=donor%40example.org&dateFrom=01-01-2024&email=again')).toBe('email=REDACTED&dateFrom=REDACTED');
  expect(queryWithoutValues('token=s3cret')).toBe('token=REDACTED');
  expect(queryWithoutValues('')).toBe('');
});


test('traceparent reaches the subscriber only with WEBHOOK_SEND_TRACEPARENT, naming the attempt span as its parent', async () => {
  await attemptInSpan(subscriber.url, false);
  expect(subscriber.requests.at(-1)?.headers.traceparent).toBeUndefined();

  exporter.reset();
  const { attempt } = await attemptInSpan(subscriber.url, true);
  const { traceId, spanId } = attempt.spanContext();
  expect(subscriber.requests.at(-1)?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
});

test('a line logged inside a span carries trace_id and span_id; one outside carries neither', () => {
  const lines: string[] = [];
  const log = createLogger('info', 'donation-webhooks', { write: (line: string) => void lines.push(line) }, traceLogFields);
  log.info('outside');
  const inside = trace.getTracer('test').startActiveSpan('inside', (span) => {
    log.child({ requestId: 'r-1' }).info('inside');
    span.end();
    return span.spanContext();
  });
  const [outside, within] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(outside).not.toHaveProperty('trace_id');
  expect(outside).not.toHaveProperty('span_id');
  expect(within).toMatchObject({ msg: 'inside', requestId: 'r-1', trace_id: inside.traceId, span_id: inside.spanId });
});

test("a stored context is joined by what runs inside it, and a resend's span links to it from a trace of its own", async () => {
  const stored = trace.getTracer('test').startActiveSpan('platform call', (span) => {
    const context = currentTraceContext();
    span.end();
    return context;
  });
  expect(stored).toEqual({ traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) });
  const [, traceId, spanId] = stored!.traceparent.split('-');

  const joined = await inTraceContext(stored, async () => currentTraceContext());
  expect(joined?.traceparent).toBe(stored!.traceparent);

  await trace.getTracer('test').startActiveSpan('operator request', async (operator) => {
    const inside = await linkedToTrace('resend webhook event', stored, async () => currentTraceContext());
    operator.end();
    expect(inside?.traceparent.split('-')[1]).toBe(operator.spanContext().traceId);
  });
  const resend = exporter.getFinishedSpans().find((span) => span.name === 'resend webhook event');
  expect(resend?.spanContext().traceId).not.toBe(traceId);
  expect(resend?.links.map((link) => [link.context.traceId, link.context.spanId])).toEqual([[traceId, spanId]]);

  // Nothing stored (an event written without tracing): the call runs as it is, in no trace of the event's.
  expect(await inTraceContext(null, async () => currentTraceContext())).toBeUndefined();
});
