import { randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { z } from 'zod';
import { type Config, loadConfig } from '../config';
import type { PayloadVersion } from '../webhooks/payload-versions';
import { isLoopbackHost } from '../webhooks/subscriber-url';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { PAYLOAD_VERSIONS } from '../webhooks/payload-versions';
import { connectToService, type Credentials, type ServiceClient } from './service-client';
import { DEFAULT_SUBSCRIBER_URL } from './test-subscriber';
import { planTraffic, STEP_KINDS, type TrafficStep } from './traffic-plan';
import { runTraffic, type StepResult, type TrafficSummary } from './traffic-runner';

/**
 * `npm run demo:traffic`: sends realistic platform traffic (donations, recurring payments, reconciliations,
 * newsletter sign-ups, shop orders) to a running service, so that webhook events and their deliveries appear in
 * the admin page and the Temporal UI. Bounded in calls and time, and loopback only unless told otherwise.
 */

export interface DemoTrafficOptions {
  baseUrl: string;
  credentials: Credentials;
  count: number;
  ratePerSecond: number;
  maxDurationMs: number;
  seed: number;
  runId: string;
  /** Point the service's webhook endpoint here first, with every event selected. */
  endpoint?: { url: string; payloadVersion: PayloadVersion; signingSecret?: string };
}

const LIMITS = { count: 10_000, rate: 500, seconds: 3_600 };

const flagsSchema = z.object({
  'base-url': z.url().optional(),
  'allow-remote': z.boolean().default(false),
  username: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  count: z.coerce.number().int().min(1).max(LIMITS.count).default(100),
  rate: z.coerce.number().positive().max(LIMITS.rate).default(10),
  'max-seconds': z.coerce.number().positive().max(LIMITS.seconds).default(600),
  seed: z.coerce.number().int().min(0).max(2 ** 32 - 1).optional(),
  'run-id': z.string().regex(/^[a-z0-9-]{1,40}$/, 'lower-case letters, digits and dashes').optional(),
  'configure-endpoint': z.boolean().default(false),
  'subscriber-url': z.url().default(DEFAULT_SUBSCRIBER_URL),
  'payload-version': z.enum(PAYLOAD_VERSIONS).default('v2.1'),
  'signing-secret': z.string().min(16).optional(),
});

export const USAGE = `Usage: npm run demo:traffic -- [options]

  --count N              calls to send (default 100, at most ${LIMITS.count})
  --rate R               calls per second at most (default 10)
  --max-seconds S        stop after S seconds whatever is left (default 600)
  --base-url URL         the service (default http://localhost:$PORT, 3000)
  --allow-remote         allow a base URL or subscriber URL that is not this machine
  --username U           staff user (default $ADMIN_USERNAME, admin)
  --password P           (default $ADMIN_PASSWORD, else the generated one in $DATA_DIR/admin-password.txt)
  --seed N               the same seed gives the same data (default: random, printed)
  --run-id ID            part of every transaction id (default: from the time); the same one again repeats the calls
  --configure-endpoint   first point the webhook endpoint at --subscriber-url with every event selected
  --subscriber-url URL   (default ${DEFAULT_SUBSCRIBER_URL}, where npm run subscriber listens)
  --payload-version V    v1, v2 or v2.1 (default v2.1)
  --signing-secret S     sign deliveries (give the subscriber the same --secret)`;

const isLoopbackUrl = (url: string) => isLoopbackHost(new URL(url).hostname);

/** The embedded default's staff password: ADMIN_PASSWORD, or the one it generated into the data folder. */
function defaultPassword(config: Config): string | undefined {
  if (config.demo.adminPassword) return config.demo.adminPassword;
  const file = path.join(config.database.dataDir, 'admin-password.txt');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/** The options of a run from the command line; every problem at once otherwise. */
export function trafficOptionsFrom(argv: string[], config: Config, now: Date = new Date()): { options: DemoTrafficOptions } | { problems: string[] } {
  const booleans = ['allow-remote', 'configure-endpoint'];
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.keys(flagsSchema.shape).map((name) => [name, { type: booleans.includes(name) ? 'boolean' : 'string' }]),
      ) as Record<string, { type: 'string' | 'boolean' }>,
    }));
  } catch (err) {
    return { problems: [(err as Error).message] };
  }
  const parsed = flagsSchema.safeParse(values);
  if (!parsed.success) return { problems: parsed.error.issues.map((issue) => `--${issue.path.join('.')}: ${issue.message}`) };
  const flags = parsed.data;
  const baseUrl = flags['base-url'] ?? `http://localhost:${config.http.port}`;
  const problems: string[] = [];
  if (!flags['allow-remote'] && !isLoopbackUrl(baseUrl)) {
    problems.push(`--base-url: ${baseUrl} is not this machine; add --allow-remote if you mean it`);
  }
  if (flags['configure-endpoint'] && !flags['allow-remote'] && !isLoopbackUrl(flags['subscriber-url'])) {
    problems.push(`--subscriber-url: ${flags['subscriber-url']} is not this machine; add --allow-remote if you mean it`);
  }
  const password = flags.password ?? defaultPassword(config);
  if (password === undefined) {
    problems.push(`--password: required (no ADMIN_PASSWORD and no ${path.join(config.database.dataDir, 'admin-password.txt')})`);
  }
  if (problems.length > 0 || password === undefined) return { problems };
  return {
    options: {
      baseUrl,
      credentials: { username: flags.username ?? config.demo.adminUsername, password },
      count: flags.count,
      ratePerSecond: flags.rate,
      maxDurationMs: flags['max-seconds'] * 1000,
      seed: flags.seed ?? randomInt(2 ** 32 - 1),
      runId: flags['run-id'] ?? now.getTime().toString(36),
      endpoint: flags['configure-endpoint']
        ? { url: flags['subscriber-url'], payloadVersion: flags['payload-version'], signingSecret: flags['signing-secret'] }
        : undefined,
    },
  };
}

async function configureEndpoint(client: ServiceClient, endpoint: NonNullable<DemoTrafficOptions['endpoint']>): Promise<void> {
  const answer = await client.request('PUT', '/admin/api/webhook-endpoint', {
    url: endpoint.url,
    active: true,
    payload_version: endpoint.payloadVersion,
    events: [...WEBHOOK_EVENT_TYPES],
    ...(endpoint.signingSecret && { signing_secret: endpoint.signingSecret }),
  });
  if (answer.status !== 200) throw new Error(`the service refused the webhook endpoint: ${answer.body?.error ?? answer.status}`);
}

async function fetchCampaigns(client: ServiceClient): Promise<{ id: number; title: string }[]> {
  const answer = await client.request('GET', '/platform/campaigns');
  if (answer.status !== 200) throw new Error(`GET /platform/campaigns answered ${answer.status}`);
  return answer.body.results;
}

export interface DemoTrafficHooks {
  onStart?: (steps: readonly TrafficStep[], client: ServiceClient) => void;
  onStep?: (result: StepResult, summary: TrafficSummary) => void;
  signal?: AbortSignal;
}

/** Connects, optionally points the webhook endpoint at the subscriber, then plans and sends the traffic. */
export async function runDemoTraffic(options: DemoTrafficOptions, hooks: DemoTrafficHooks = {}): Promise<TrafficSummary> {
  const client = await connectToService(options.baseUrl, options.credentials);
  if (options.endpoint) await configureEndpoint(client, options.endpoint);
  const steps = planTraffic({ seed: options.seed, count: options.count, runId: options.runId, campaigns: await fetchCampaigns(client) });
  hooks.onStart?.(steps, client);
  return runTraffic({
    client,
    steps,
    ratePerSecond: options.ratePerSecond,
    maxDurationMs: options.maxDurationMs,
    signal: hooks.signal,
    onStep: hooks.onStep,
  });
}

/**
 * Where this run's deliveries can be watched: the admin page of the service the calls went to, and the Temporal UI
 * that service reports (`GET /admin/api/info`), or none where it knows of none: never this machine's default, which
 * is another service's when the calls went to the production-like stack.
 */
export async function whereToWatch(client: ServiceClient): Promise<string> {
  const info = await client.request('GET', '/admin/api/info').catch(() => undefined);
  const ui: unknown = info?.status === 200 ? info.body?.temporal_ui_url : undefined;
  const admin = `${client.baseUrl.replace(/\/+$/, '')}/admin/`;
  return typeof ui === 'string'
    ? `Watch the deliveries: ${admin} and the Temporal UI (${ui}).`
    : `Watch the deliveries: ${admin} (the service names no Temporal UI; its TEMPORAL_UI_URL would).`;
}

export function formatSummary(summary: TrafficSummary): string {
  const errors = Object.entries(summary.errors).map(([status, count]) => `${count} × ${status}`);
  const rows = STEP_KINDS.filter((kind) => Object.values(summary.byKind[kind]).some((n) => n > 0)).map((kind) => {
    const { created, duplicates, skipped, errors: failed } = summary.byKind[kind];
    return `  ${kind.padEnd(24)}${String(created).padStart(8)}${String(duplicates).padStart(11)}${String(skipped).padStart(8)}${String(failed).padStart(7)}`;
  });
  const stopped = {
    'time-limit': ' (stopped at the time limit)',
    interrupted: ' (interrupted)',
    unreachable: ' (stopped: the service no longer answers)',
  };
  return [
    `Sent ${summary.sent} of ${summary.planned} planned calls in ${(summary.elapsedMs / 1000).toFixed(1)} s${summary.stopped ? stopped[summary.stopped] : ''}.`,
    `Created ${summary.created}, duplicates ${summary.duplicates} (answered 200: recorded before), skipped ${summary.skipped}, errors ${errors.length > 0 ? errors.join(', ') : 'none'}.`,
    '',
    `  ${'call'.padEnd(24)} created duplicates skipped errors`,
    ...rows,
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadConfig();
  const parsed = trafficOptionsFrom(argv, config);
  if ('problems' in parsed) {
    process.stderr.write(`${parsed.problems.join('\n')}\n\n${USAGE}\n`);
    return 2;
  }
  const { options } = parsed;
  const interrupt = new AbortController();
  process.once('SIGINT', () => interrupt.abort());
  const bar = new SingleBar({
    format: 'demo traffic |{bar}| {value}/{total} calls | {created} created, {duplicates} duplicates, {errors} errors | {eta_formatted} left',
    hideCursor: true,
  });
  let service: ServiceClient | undefined;
  const summary = await runDemoTraffic(options, {
    signal: interrupt.signal,
    onStart(steps, client) {
      service = client;
      process.stdout.write(
        `Sending ${steps.length} calls to ${client.baseUrl} at up to ${options.ratePerSecond}/s (seed ${options.seed}, run ${options.runId}, ${client.scheme} auth)\n`,
      );
      if (options.endpoint) process.stdout.write(`Webhook endpoint: ${options.endpoint.url} (${options.endpoint.payloadVersion}, every event)\n`);
      if (client.scheme === 'basic') process.stdout.write('(HTTP Basic: the service checks the password on every call, which is slow)\n');
      bar.start(steps.length, 0, { created: 0, duplicates: 0, errors: 0 });
    },
    onStep(_result, progress) {
      const errors = Object.values(progress.errors).reduce((sum, n) => sum + n, 0);
      bar.increment(1, {
        created: progress.created,
        duplicates: progress.duplicates,
        errors,
      });
    },
  }).finally(() => bar.stop());
  const watch = service ? `${await whereToWatch(service)}\n` : '';
  process.stdout.write(`\n${formatSummary(summary)}\n\n${watch}Same data again: --seed ${options.seed} (with a new run id, new payments).\n`);
  return Object.keys(summary.errors).length > 0 ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`demo traffic: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
