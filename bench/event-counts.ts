import { writeFileSync } from 'node:fs';
import os from 'node:os';
import type { Db } from '../src/db/knex';
import { recordAttempt } from '../src/webhook-events/attempts';
import { countEventsByStatus } from '../src/webhook-events/gauge-counts';
import { flags, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { CpuMeter } from './support/processes';
import { startStack } from './support/stack';
import { markdownTable, summarize } from './support/stats';

/**
 * What the counts of events by status that Postgres keeps (migration 024) cost and save, against an embedded
 * Postgres, without Temporal or HTTP:
 * - on the hot path: `--events` events in turn, `--concurrency` at once, each inserted as the platform writes one
 *   and then delivered by its attempt's record (src/webhook-events/attempts.ts), with the counting triggers switched
 *   on and off in alternating blocks: CPU ms per event of Postgres and of this process;
 * - at each scrape of the `webhook_events{status}` gauge, with `--kept` events in the table: the count it made until
 *   then (one `GROUP BY` over every event) against the read of the kept counts, alternately, `--reads` times each;
 *   and how long the migration's count of the events already there takes.
 *
 *   node dist/bench/event-counts.js --blocks=6 --events=1000 --kept=1000000
 */
const options = flags({ blocks: 6, events: 1000, concurrency: 8, kept: 1_000_000, reads: 3, out: '' });

const COUNTING_TRIGGERS = ['count_inserted_webhook_event', 'count_webhook_event_status_change'];

const setCounting = async (db: Db, on: boolean) => {
  for (const trigger of COUNTING_TRIGGERS) await db.raw(`ALTER TABLE webhook_events ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
};

/** One event as the outbox writes it (one row, its own transaction), then its first attempt recorded as delivered. */
async function event(db: Db): Promise<void> {
  const { rows } = await db.raw<{ rows: Array<{ id: number }> }>(
    `INSERT INTO webhook_events (endpoint_id, event_type, payload_version, source_key, payload, status, created_at, updated_at, workflow_started_at)
     VALUES ((SELECT id FROM webhook_endpoints LIMIT 1), 'donation.completed', 'v2.1', 'count-bench-' || gen_random_uuid(),
             repeat('x', 1500), 'waiting', now(), now(), now())
     RETURNING id`,
  );
  const startedAtMs = Date.now();
  await recordAttempt(db, {
    eventId: rows[0].id,
    attemptNumber: 1,
    attempt: { kind: 'scheduled', number: 1, outcome: 'delivered' },
    result: { outcome: 'delivered', responseCode: 200, error: null, startedAtMs, durationMs: 12 },
    responseBody: 'ok',
    retryDelayMs: 5 * 60_000,
  });
}

/**
 * `count` delivered events written at once, without the triggers, then counted as migration 024 counts the events
 * already there; answers how long that count took (ms).
 */
async function keep(db: Db, count: number): Promise<number> {
  await setCounting(db, false);
  await db.raw(
    `INSERT INTO webhook_events (endpoint_id, event_type, payload_version, source_key, payload, status, created_at, updated_at, workflow_started_at)
     SELECT (SELECT id FROM webhook_endpoints LIMIT 1), 'donation.completed', 'v2.1', 'count-bench-kept-' || n,
            repeat('x', 1500), CASE WHEN n % 1000 = 0 THEN 'max_retries_reached' ELSE 'delivered' END, now(), now(), now()
       FROM generate_series(1, ?) AS n`,
    [count],
  );
  await db.raw('VACUUM ANALYZE webhook_events');
  await db.raw('DELETE FROM webhook_event_counts');
  const started = performance.now();
  await db.raw('INSERT INTO webhook_event_counts (status, slot, events) SELECT status, id % 16, count(*) FROM webhook_events GROUP BY 1, 2');
  const recountMs = performance.now() - started;
  await setCounting(db, true);
  return recountMs;
}

const countedAtScrape = async (db: Db) => db.raw('SELECT status, count(*) AS count FROM webhook_events GROUP BY status');

async function main() {
  const stack = await startStack({ roles: [], withoutTemporal: true });
  const writes: Array<{ counting: boolean; block: number; nodeMs: number; postgresMs: number; wallMs: number; loadAverage: number }> = [];
  const reads: Array<{ read: string; wallMs: number; postgresMs: number; loadAverage: number }> = [];
  let migrationCountMs = 0;
  try {
    await stack.configureEndpoint('http://127.0.0.1:9/');
    const { db } = stack;
    const postgres = new Map([...stack.processes()].filter(([name]) => name === 'postgres'));
    for (let i = 0; i < 200; i++) await event(db); // warm-up
    for (let block = 0; block < options.blocks; block++) {
      for (const counting of block % 2 === 0 ? [true, false] : [false, true]) {
        await setCounting(db, counting);
        const meter = new CpuMeter(new Map([...postgres, ['bench', process.pid]]));
        const started = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: options.concurrency }, async () => {
            while (next++ < options.events) await event(db);
          }),
        );
        const used = meter.used();
        writes.push({
          counting,
          block,
          nodeMs: (used.bench.seconds * 1000) / options.events,
          postgresMs: (used.postgres.seconds * 1000) / options.events,
          wallMs: (performance.now() - started) / options.events,
          loadAverage: os.loadavg()[0],
        });
        process.stderr.write(`block ${block + 1}: counting ${counting ? 'on' : 'off'}\n`);
      }
    }
    await setCounting(db, true);

    migrationCountMs = await keep(db, options.kept);
    const readers: Array<[string, () => Promise<unknown>]> = [
      ['GROUP BY over webhook_events (before)', () => countedAtScrape(db)],
      ['the kept counts (countEventsByStatus)', () => countEventsByStatus(db)],
    ];
    for (let round = 0; round < options.reads; round++) {
      for (const [read, run] of round % 2 === 0 ? readers : [...readers].reverse()) {
        const meter = new CpuMeter(postgres);
        const started = performance.now();
        await run();
        reads.push({ read, wallMs: performance.now() - started, postgresMs: meter.used().postgres.seconds * 1000, loadAverage: os.loadavg()[0] });
      }
    }
  } finally {
    await stack.stop();
  }
  const median = <T>(rows: T[], pick: (row: T) => number, digits = 3) => summarize(rows.map(pick)).p50.toFixed(digits);
  const writeRows = [true, false].map((counting) => {
    const mine = writes.filter((write) => write.counting === counting);
    return {
      'counting triggers': counting ? 'on' : 'off',
      'Postgres, CPU ms per event': median(mine, (r) => r.postgresMs),
      'this process, CPU ms per event': median(mine, (r) => r.nodeMs),
      'wall ms per event': median(mine, (r) => r.wallMs),
      blocks: mine.length,
    };
  });
  const readRows = [...new Set(reads.map((read) => read.read))].map((read) => {
    const mine = reads.filter((row) => row.read === read);
    return { [`gauge read, ${options.kept} events kept`]: read, 'wall ms': median(mine, (r) => r.wallMs, 1), 'Postgres CPU ms': median(mine, (r) => r.postgresMs, 1), reads: mine.length };
  });
  if (options.out) writeFileSync(options.out, JSON.stringify({ machine: await machineInfo(), options, writes, reads, migrationCountMs }, null, 2));
  process.stdout.write(
    `${markdownTable(writeRows)}\n\nmedians of ${options.blocks} blocks of ${options.events} events each, ${options.concurrency} at once\n\n` +
      `${markdownTable(readRows)}\n\nmedians of ${options.reads} reads each; migration 024's count of the events already there: ` +
      `${migrationCountMs.toFixed(0)} ms\n`,
  );
}

runMain(main);
