import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { donationRowsInPeriod } from '../src/donations/payment-store';
import { swissDayRange } from '../src/api/query-params';
import { createDb } from '../src/db/knex';
import { API_DATA } from './support/api-data';
import { flags, runMain } from '../stack/cli';
import { memoryOf } from './support/processes';

/**
 * The bound of the donations-list benchmark, as a plain script: the API's own SQL for the period, run with pg,
 * all rows in memory, serialised with one JSON.stringify. Prints its timings as JSON on stdout.
 */
const options = flags({ 'database-url': '', runs: 5 });

async function main() {
  // Knex only compiles the SQL (so that it is exactly the API's); pg runs it.
  const compiler = createDb({ connectionString: options['database-url'] });
  const { start, end } = swissDayRange(API_DATA.period.dateFrom, API_DATA.period.dateTo);
  const { sql, bindings } = donationRowsInPeriod(compiler, 'TEST', start, end).toSQL().toNative();
  await compiler.destroy();

  const client = new pg.Client({ connectionString: options['database-url'] });
  await client.connect();
  const baselineRssMb = memoryOf(process.pid).rssMb;
  const timesMs: number[] = [];
  let rows = 0;
  let bytes = 0;
  for (let run = 0; run <= options.runs; run++) {
    const started = performance.now();
    const result = await client.query(sql, bindings as unknown[]);
    const json = JSON.stringify(result.rows);
    const elapsed = performance.now() - started;
    if (run > 0) timesMs.push(elapsed); // the first run warms caches and the JIT
    rows = result.rows.length;
    bytes = Buffer.byteLength(json);
  }
  await client.end();
  process.stdout.write(JSON.stringify({ timesMs, rows, bytes, baselineRssMb, peakRssMb: memoryOf(process.pid).peakRssMb }));
}

runMain(main);
