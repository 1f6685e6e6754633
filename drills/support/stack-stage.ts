import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { createDb, type Db } from '../../src/db/knex';
import { createTemporalClient } from '../../src/temporal/client';
import { freePortPlan, planPorts } from '../../stack/ports';
import { type RunningStack, startStack, temporalClientOptions } from '../../stack/stack';
import { configureEndpoint, type StaffApi, staffLogin } from './platform-load';
import { sleep } from './wait';
import { progress } from './report';
import { type RecordingSubscriber, startRecordingSubscriber } from './subscriber';

/**
 * What every drill on the production-like stack starts from: `npm run stack`'s own code (stack/stack.ts) with two
 * API and two delivery replicas behind Caddy, Temporal as four services on Postgres with mTLS, in a data folder of
 * its own; a recording subscriber the endpoint points at; a connection to the application's database and a
 * Temporal client with the stack's client certificate, for the verdict. Everything stops when the drill ends.
 */
export interface StackStage {
  log: (message: string) => void;
  stack: RunningStack;
  /** The API through Caddy, with the stack's staff user. */
  api: StaffApi;
  db: Db;
  temporal: Client;
  subscriber: RecordingSubscriber;
}

/** `--base-port`, `--membership-base-port` (0: a free block between 20000 and 32000), `--keep-logs`. */
export const stackDrillFlags = { 'base-port': 0, 'membership-base-port': 0, 'keep-logs': false };

export async function setUpStackDrill(
  name: string,
  onCleanup: (stop: () => Promise<void>) => void,
  {
    subscriberDelayMs,
    ports: portFlags,
    shellEnv = {},
  }: {
    subscriberDelayMs: number;
    ports: typeof stackDrillFlags;
    /** The variables of docker-compose.yml a drill sets, as a shell would (DELIVERY_STUCK_AFTER_MINUTES). */
    shellEnv?: Record<string, string>;
  },
): Promise<StackStage> {
  const log = progress(Date.now());
  const layout = { api: 2, delivery: 2, history: 1 };
  const ports = portFlags['base-port']
    ? planPorts({ basePort: portFlags['base-port'], membershipBasePort: portFlags['membership-base-port'] || undefined, ...layout })
    : await freePortPlan(layout);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `drill-stack-${name}-`));
  // As root, Postgres runs as the `postgres` user, which must be able to reach its data directory.
  await chmod(dataDir, 0o755);
  onCleanup(() => (portFlags['keep-logs'] ? rm(path.join(dataDir, 'postgres'), { recursive: true, force: true }) : rm(dataDir, { recursive: true, force: true })));
  log(`starting the stack in ${dataDir} (ports from ${ports.balancer}, membership from ${ports.frontend.membership})`);
  const stack = await startStack({ dataDir, ports, tls: true, shellEnv, log: (line) => log(line.trim()) });
  onCleanup(() => stack.stop());
  const db = createDb({ connectionString: stack.postgresUrl('donations'), pool: { max: 3 } });
  onCleanup(() => db.destroy());
  const temporal = createTemporalClient({ ...temporalClientOptions(stack), namespace: stack.namespace });
  onCleanup(() => temporal.connection.close());
  const subscriber = await startRecordingSubscriber({ delayMs: subscriberDelayMs });
  onCleanup(() => subscriber.close());
  const api: StaffApi = { apiUrl: stack.apiUrl, staffToken: () => staffLogin(stack.apiUrl, stack.staff) };
  await configureEndpoint(api, subscriber.url);
  return { log, stack, api, db, temporal, subscriber };
}

/** What a fault may cost in duplicates: the attempts it could interrupt between the POST and its record. */
export interface Exposure {
  /** Requests the subscriber held open (received, not answered) when the fault began. */
  openAtFault: number;
  receivedAtFault: number;
  /**
   * Events whose POST the subscriber received but whose attempt was not recorded once the fault took effect: the
   * only ones an attempt may send again (attemptDelivery never re-sends a recorded attempt). The duplicate bound.
   */
  exposed: Set<number>;
}

async function recordedEvents(db: Db): Promise<Set<number> | undefined> {
  try {
    return new Set((await db('webhook_delivery_attempts').distinct('event_id')).map((row: { event_id: number }) => row.event_id));
  } catch {
    return undefined;
  }
}

/**
 * Runs `fault` (which may also end it: a restart) and measures its exposure once the fault has taken effect (`fault`
 * says when: a process has stopped) and the requests already on the wire had `settleMs` to arrive: the events
 * received without a recorded attempt. When Postgres is down by then, the attempts recorded before the fault stand in
 * (a larger set, so never a smaller bound).
 */
export async function withExposure(
  db: Db,
  subscriber: RecordingSubscriber,
  settleMs: number,
  fault: (tookEffect: () => void) => Promise<void>,
): Promise<Exposure> {
  const before = await recordedEvents(db);
  const openAtFault = subscriber.inFlight();
  const receivedAtFault = subscriber.total();
  let tookEffect!: () => void;
  const effective = new Promise<void>((resolve) => (tookEffect = resolve));
  const exposed = (async () => {
    await effective;
    await sleep(settleMs);
    const received = [...subscriber.received.keys()];
    const recorded = (await recordedEvents(db)) ?? before ?? new Set<number>();
    return new Set(received.filter((id) => !recorded.has(id)));
  })();
  await fault(tookEffect);
  tookEffect();
  return { openAtFault, receivedAtFault, exposed: await exposed };
}

/** Duplicates against the exposures of all faults: each duplicated event must have been exposed. */
export function duplicateVerdict(subscriber: RecordingSubscriber, exposures: Exposure[]) {
  const bound = new Set(exposures.flatMap(({ exposed }) => [...exposed]));
  const duplicated = [...subscriber.received].filter(([, count]) => count > 1).map(([id]) => id);
  return {
    duplicateBound: bound.size,
    openAtFaults: exposures.map(({ openAtFault }) => openAtFault),
    duplicatesOutsideBound: duplicated.filter((id) => !bound.has(id)),
    withinBound: duplicated.every((id) => bound.has(id)),
  };
}

/** `webhook_deliveries_total{outcome="delivered"}` of each delivery replica, from its /metrics. */
export function deliveredByReplica(stack: RunningStack): Promise<Record<string, number | null>> {
  return metricByReplica(stack, (line) => line.startsWith('webhook_deliveries_total{') && line.includes('outcome="delivered"'));
}

/** `webhook_relay_leading` of each delivery replica: 1 for the one whose relay leads (docs/delivery.md). */
export function relayLeadByReplica(stack: RunningStack): Promise<Record<string, number | null>> {
  return metricByReplica(stack, (line) => line.startsWith('webhook_relay_leading '));
}

/** The sum of the /metrics lines `wanted` picks, for each delivery replica; null where /metrics did not answer. */
async function metricByReplica(stack: RunningStack, wanted: (line: string) => boolean): Promise<Record<string, number | null>> {
  const entries = await Promise.all(
    stack.topology.delivery.map(async ({ name, env }) => {
      try {
        const response = await fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`, {
          headers: { authorization: `Bearer ${env.METRICS_TOKEN}` },
          signal: AbortSignal.timeout(5_000),
        });
        const text = await response.text();
        const sum = text
          .split('\n')
          .filter(wanted)
          .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
        return [name, sum] as const;
      } catch {
        return [name, null] as const;
      }
    }),
  );
  return Object.fromEntries(entries);
}
