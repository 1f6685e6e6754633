import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../src/db/knex';
import type { AttemptStart } from '../src/webhook-events/attempts';
import { flags, list, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { CpuMeter } from './support/processes';
import { startStack } from './support/stack';
import { markdownTable, summarize } from './support/stats';

/**
 * What an attempt's statements cost, without Temporal or HTTP: the event read with the attempt's start, and its
 * outcome (src/webhook-events/attempts.ts; checkouts before issue 29's third cut read and start in two statements),
 * for `--events` events in turn, `--concurrency` at once, against an embedded Postgres. Each `--roots` entry is a
 * built checkout whose attempts.js is loaded into this process (its own Knex builder or prepared statements, on this
 * process's pool), so that two versions are compared side by side in one run, alternately, block after block: CPU ms
 * per attempt of this process and of Postgres.
 *
 *   node dist/bench/attempt-statements.js --roots=/path/to/before,. --blocks=6 --events=1000
 */
const options = flags({ roots: '.', blocks: 6, events: 1000, concurrency: 8, out: '' });

/**
 * attempts.js of a checkout: the event read and the start in one statement (startAttempt), or in two (before); the
 * older start takes the fields it knows of an AttemptStart.
 */
interface AttemptStatements {
  startAttempt?(db: Db, start: AttemptStart): Promise<unknown>;
  findEventForAttempt?(db: Db, eventId: number, attemptNumber: number): Promise<unknown>;
  recordAttemptStart?(db: Db, start: AttemptStart): Promise<void>;
  recordAttempt(db: Db, record: unknown): Promise<unknown>;
}

/** Events as the platform writes them, waiting, with nothing attempted: `count` of them, their ids. */
async function waitingEvents(db: Db, count: number): Promise<number[]> {
  const { rows } = await db.raw<{ rows: Array<{ id: number }> }>(
    `INSERT INTO webhook_events (endpoint_id, event_type, payload_version, source_key, payload, status, created_at, updated_at, workflow_started_at)
     SELECT (SELECT id FROM webhook_endpoints LIMIT 1), 'donation.completed', 'v2.1', 'attempt-bench-' || gen_random_uuid(),
            repeat('x', 2000), 'waiting', now(), now(), now()
       FROM generate_series(1, ?) RETURNING id`,
    [count],
  );
  return rows.map((row) => row.id);
}

/** One attempt's statements, delivered at once, as attemptDelivery sends them. */
async function attempt(statements: AttemptStatements, db: Db, eventId: number): Promise<void> {
  const startedAt = new Date();
  const start = { eventId, attemptNumber: 1, manual: false, startedAt, eventKey: null };
  if (statements.startAttempt) {
    await statements.startAttempt(db, start);
  } else {
    await statements.findEventForAttempt!(db, eventId, 1);
    await statements.recordAttemptStart!(db, start);
  }
  await statements.recordAttempt(db, {
    eventId,
    attemptNumber: 1,
    attempt: { kind: 'scheduled', number: 1, outcome: 'delivered' },
    result: { outcome: 'delivered', responseCode: 200, error: null, startedAtMs: startedAt.getTime(), durationMs: 12 },
    responseBody: 'ok',
    retryDelayMs: 5 * 60_000,
  });
}

async function main() {
  const roots = list(options.roots).map((root) => path.resolve(root));
  const variants = roots.map((root) => ({
    root,
    statements: require(path.join(root, 'dist', 'src', 'webhook-events', 'attempts.js')) as AttemptStatements,
  }));
  const stack = await startStack({ roles: [], withoutTemporal: true });
  const results: Array<{ root: string; block: number; nodeMs: number; postgresMs: number; wallMs: number; loadAverage: number }> = [];
  try {
    await stack.configureEndpoint('http://127.0.0.1:9/');
    const postgres = new Map([...stack.processes()].filter(([name]) => name === 'postgres'));
    for (const variant of variants) for (const id of await waitingEvents(stack.db, 200)) await attempt(variant.statements, stack.db, id); // warm-up
    for (let block = 0; block < options.blocks; block++) {
      const order = block % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        const ids = await waitingEvents(stack.db, options.events);
        const meter = new CpuMeter(new Map([...postgres, ['bench', process.pid]]));
        const started = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: options.concurrency }, async () => {
            while (next < ids.length) await attempt(variant.statements, stack.db, ids[next++]);
          }),
        );
        const used = meter.used();
        results.push({
          root: variant.root,
          block,
          nodeMs: (used.bench.seconds * 1000) / ids.length,
          postgresMs: (used.postgres.seconds * 1000) / ids.length,
          wallMs: (performance.now() - started) / ids.length,
          loadAverage: os.loadavg()[0],
        });
        process.stderr.write(`block ${block + 1}: ${variant.root}\n`);
      }
    }
  } finally {
    await stack.stop();
  }
  const rows = variants.map(({ root }) => {
    const mine = results.filter((result) => result.root === root);
    const median = (pick: (result: (typeof results)[number]) => number) => summarize(mine.map(pick)).p50.toFixed(3);
    return { checkout: root, 'this process, CPU ms per attempt': median((r) => r.nodeMs), 'Postgres, CPU ms per attempt': median((r) => r.postgresMs), 'wall ms per attempt': median((r) => r.wallMs), blocks: mine.length };
  });
  const machine = await machineInfo();
  if (options.out) writeFileSync(options.out, JSON.stringify({ machine, options, results }, null, 2));
  process.stdout.write(`${markdownTable(rows)}\n\nmedians of ${options.blocks} blocks of ${options.events} attempts each, ${options.concurrency} at once\n`);
}

runMain(main);
