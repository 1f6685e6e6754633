import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { upsertUser } from '../../src/auth/accounts';
import type { Db } from '../../src/db/knex';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import type { DevServerHandle } from '../../src/temporal/dev-server';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver';
import { checkoutBody } from '../support/platform-calls';
import { startTestDevServer } from '../support/temporal';
import { finished, spawnTypeScript } from '../support/typescript-process';
import { eventRow, saveEndpointForEveryEvent } from '../support/webhook-rows';

// One platform call is one trace, across processes as production runs them: the `api` role takes a checkout and
// stores its trace context with the event, the `delivery` role (another process, its own relay and worker) starts the
// workflow inside it, and every span reaches a real OTLP/HTTP receiver (JSON). And a role started without the OTEL_*
// settings loads no module of OpenTelemetry at all.

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'start-command-modules.ts');
const STAFF = { username: 'tracing-staff', password: `password-${randomUUID()}` };

let db: Db;
let databaseUrl: string;
let temporal: DevServerHandle;
let subscriber: Subscriber;
let receiver: OtlpReceiver;
let dataDir: string;

beforeAll(async () => {
  ({ db, url: databaseUrl } = await createTestDatabase());
  temporal = await startTestDevServer();
  subscriber = await startSubscriber({ reply: () => ({ status: 200, body: 'received' }) });
  receiver = await startOtlpReceiver();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'tracing-'));
  await upsertUser(db, { ...STAFF, isStaff: true });
  await saveEndpointForEveryEvent(db, { url: `${subscriber.url}?token=secret-token` });
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await subscriber?.close();
  await temporal?.stop();
  await db?.destroy();
  await rm(dataDir, { recursive: true, force: true });
});

interface Role {
  /** Stops the role (SIGTERM), and answers the modules it had loaded. */
  stop(): Promise<string[]>;
}

/** A role of the start command in its own process, with `env` beside what every role here needs. */
async function startRole(role: string, env: Record<string, string>): Promise<Role> {
  const modulesFile = path.join(dataDir, `${role}-${randomUUID()}.json`);
  const child = spawnTypeScript(FIXTURE, [role], {
    PATH: process.env.PATH,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ALLOW_INSECURE_WEBHOOK_URLS: 'true',
    LOADED_MODULES_FILE: modulesFile,
    ...env,
  });
  const exited = finished(child);
  return {
    async stop() {
      child.kill('SIGTERM');
      const { code, stderr } = await exited;
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      return JSON.parse(await readFile(modulesFile, 'utf8')) as string[];
    },
  };
}

const tracingEnv = (serviceName: string) => ({
  OTEL_TRACES_EXPORTER: 'otlp',
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: serviceName,
  OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
});

/**
 * The modules of OpenTelemetry's SDK, exporters and instrumentations and of Temporal's interceptors a process loaded.
 * Not `@opentelemetry/api`: prom-client loads it for its process metrics in every role, with or without tracing
 * (and without an SDK registered, it is the API's no-op).
 */
const openTelemetryModules = (modules: string[]) =>
  modules.filter(
    (file) =>
      (file.includes(`${path.sep}@opentelemetry${path.sep}`) && !file.includes(`${path.sep}@opentelemetry${path.sep}api${path.sep}`)) ||
      file.includes(`${path.sep}interceptors-opentelemetry${path.sep}`),
  );

async function listening(port: number): Promise<void> {
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true, {
    timeoutMs: 60_000,
    what: 'the API to listen',
  });
}

const postCheckout = (port: number, headers: Record<string, string> = {}) =>
  fetch(`http://127.0.0.1:${port}/platform/checkouts`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${STAFF.username}:${STAFF.password}`).toString('base64')}`,
      ...headers,
    },
    body: JSON.stringify(checkoutBody()),
  });

const lastEvent = async () => (await db('webhook_events').orderBy('id', 'desc').limit(1))[0] as { id: number; trace_context: { traceparent: string; tracestate?: string } | null };

const only = (spans: ReceivedSpan[], what: string, match: (span: ReceivedSpan) => boolean): ReceivedSpan => {
  const found = spans.filter(match);
  if (found.length !== 1) throw new Error(`expected one span ${what}, found ${found.length}: ${spans.map((span) => span.name).join(', ')}`);
  return found[0];
};

test('a platform call, its outbox row, the relay, the workflow and the attempt are one trace across the api and delivery processes', async () => {
  const port = await freePort();
  const api = await startRole('api', { ...tracingEnv('tracing-api'), PORT: String(port) });
  const taskQueue = `tracing-${randomUUID()}`;
  let delivery: Role | undefined;
  try {
    await listening(port);
    const response = await postCheckout(port);
    expect(response.status).toBe(201);
    const event = await lastEvent();
    // Stored in the platform call's transaction: W3C Trace Context.
    expect(event.trace_context).toEqual({ traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) });
    const [, traceId, callSpanId] = event.trace_context!.traceparent.split('-');

    // A caller's own trace is continued, as W3C Trace Context says, but its tracestate (the caller's data) is not
    // kept: neither the row nor, later, the subscriber gets it. A malformed traceparent starts a trace of ours.
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    expect((await postCheckout(port, { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01`, tracestate: 'evil=x,secret=hunter2' })).status).toBe(201);
    const continued = (await lastEvent()).trace_context;
    expect(continued).toEqual({ traceparent: expect.stringMatching(new RegExp(`^00-${callerTrace}-[0-9a-f]{16}-01$`)) });
    expect((await postCheckout(port, { traceparent: `00-${'z'.repeat(32)}-00f067aa0ba902b7-01'; DROP TABLE webhook_events` })).status).toBe(201);
    expect((await lastEvent()).trace_context?.traceparent).toMatch(/^00-(?!z)[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    delivery = await startRole('delivery', { ...tracingEnv('tracing-delivery'), TEMPORAL_TASK_QUEUE: taskQueue, TEMPORAL_WORKER_VERSIONING: 'false' });
    await eventually(async () => (await eventRow(db, event.id)).status === 'delivered', { timeoutMs: 90_000, what: 'the delivery' });
    // Exported as each process stops: what the batch held is sent then.
    await delivery.stop();
    delivery = undefined;
    const apiModules = await api.stop();
    const loaded = openTelemetryModules(apiModules).join('\n');
    for (const name of ['sdk-trace-base', 'exporter-trace-otlp-http', 'instrumentation-http', 'instrumentation-pg']) expect(loaded).toContain(`@opentelemetry/${name}/`);
    expect(loaded).toContain('@temporalio/interceptors-opentelemetry/');

    const trace = receiver.spans.filter((span) => span.traceId === traceId);
    const server = only(trace, 'SERVER', (span) => span.kind === 2 && span.service === 'tracing-api');
    expect(server).toMatchObject({
      name: 'POST /platform/checkouts',
      attributes: { 'http.route': '/platform/checkouts', 'http.request.method': 'POST', 'http.response.status_code': 201 },
    });
    // Postgres, inside the request: the event's insert among its queries.
    expect(trace.some((span) => span.service === 'tracing-api' && /insert into "?webhook_events"?/i.test(String(span.attributes['db.query.text'] ?? span.attributes['db.statement'])))).toBe(true);

    const start = only(trace, 'StartWorkflow', (span) => span.name === 'StartWorkflow:deliverEvent');
    expect(start.service).toBe('tracing-delivery');
    // The relay has no span of its own around the start: the stored context is the start's parent.
    expect(start.parentSpanId).toBe(callSpanId);
    const run = only(trace, 'RunWorkflow', (span) => span.name === 'RunWorkflow:deliverEvent');
    expect(run.parentSpanId).toBe(start.spanId);
    const activity = only(trace, 'RunActivity', (span) => span.name === 'RunActivity:attemptDelivery');
    const attempt = only(trace, 'CLIENT POST', (span) => span.kind === 3 && span.name === 'POST');
    expect(attempt.parentSpanId).toBe(activity.spanId);
    expect(attempt).toMatchObject({
      name: 'POST',
      service: 'tracing-delivery',
      attributes: {
        'http.request.method': 'POST',
        // The subscriber's token stays out of the trace.
        'url.full': `${subscriber.url}?token=REDACTED`,
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(subscriber.url).port),
        'http.response.status_code': 200,
        'webhook.event.id': Number(event.id),
        'webhook.attempt': 1,
      },
    });
    expect(attempt.attributes['error.type']).toBeUndefined();
    // Off by default: the subscriber is told nothing of the trace.
    expect(subscriber.requests.at(-1)?.headers.traceparent).toBeUndefined();
  } finally {
    await delivery?.stop().catch(() => undefined);
    await api.stop().catch(() => undefined);
  }
}, 180_000);

test('a role started without the OTEL_* settings loads no module of OpenTelemetry, and stores no trace context', async () => {
  const port = await freePort();
  const api = await startRole('api', { PORT: String(port) });
  let modules: string[] = [];
  try {
    await listening(port);
    expect((await postCheckout(port)).status).toBe(201);
  } finally {
    modules = await api.stop();
  }
  expect(modules.some((file) => file.includes(`${path.sep}koa${path.sep}`))).toBe(true);
  expect(openTelemetryModules(modules)).toEqual([]);
  const event = await lastEvent();
  expect(event.trace_context).toBeNull();
}, 120_000);
