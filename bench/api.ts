import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { projectRoot } from '../src/config';
import { API_DATA, generateApiData } from './support/api-data';
import { flags, list, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { CpuMeter, MemorySampler } from './support/processes';
import { startStack, type Stack } from './support/stack';
import { markdownTable, median } from './support/stats';
import { runWrk } from './support/wrk';
import { pidOf } from '../stack/process';

/**
 * Part 3: the read API on a large data set. `crm/donations/` over a period of 100,000 donations against the same
 * SQL plus JSON.stringify in a plain script, with the API process's memory; `crm/contacts/` pages of 100 over
 * 50,000 contacts and 200,000 donations under 16 concurrent connections (wrk).
 */
const options = flags({
  runs: 5,
  versions: 'v2.1,v2,v1',
  connections: 16,
  threads: 2,
  'wrk-duration': 20,
  'contact-versions': 'v2.1,v1',
  /** Node options of the API process, e.g. `--max-old-space-size=256` as docker-compose.yml runs it. */
  'api-node-args': '',
  'cpu-prof': false,
  'cpu-prof-dir': '/tmp/donation-webhooks-bench-profiles',
  /** Another built checkout of the service to measure (e.g. the commit before an optimisation). */
  'service-root': '',
  out: '',
});

async function timedDownload(url: string, headers: Record<string, string>) {
  const started = performance.now();
  const response = await fetch(url, { headers });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  let bytes = 0;
  let firstByteMs = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (bytes === 0) firstByteMs = performance.now() - started;
    bytes += chunk.length;
  }
  return { ms: performance.now() - started, firstByteMs, bytes };
}

async function donationsList(stack: Stack, headers: Record<string, string>) {
  const api = stack.services.get('api')!;
  const query = `dateFrom=${API_DATA.period.dateFrom}&dateTo=${API_DATA.period.dateTo}`;
  const rows = [];
  for (const version of list(options.versions)) {
    const url = `${stack.apiUrl}/api/${version}/crm/donations/?${query}`;
    await timedDownload(url, headers); // warm-up: JIT, Postgres buffers
    const times: number[] = [];
    const firstBytes: number[] = [];
    const growths: number[] = [];
    let bytes = 0;
    for (let run = 0; run < options.runs; run++) {
      const memory = new MemorySampler(pidOf(api), 10);
      const before = memory.sample();
      memory.reset();
      const result = await timedDownload(url, headers);
      memory.sample();
      memory.stop();
      times.push(result.ms);
      firstBytes.push(result.firstByteMs);
      growths.push(memory.peakMb - before);
      bytes = result.bytes;
    }
    rows.push({ version, bytes, medianMs: median(times), firstByteMs: median(firstBytes), peakRssGrowthMb: Math.max(...growths), times });
  }
  const { stdout } = await promisify(execFile)(process.execPath, [
    path.join(projectRoot, 'dist', 'bench', 'api-raw-query.js'),
    `--database-url=${stack.databaseUrl}`,
    `--runs=${options.runs}`,
  ]);
  const raw = JSON.parse(stdout) as { timesMs: number[]; rows: number; bytes: number; baselineRssMb: number; peakRssMb: number };
  return { api: rows, raw: { ...raw, medianMs: median(raw.timesMs) } };
}

async function contactPages(stack: Stack, headers: Record<string, string>) {
  const pages = API_DATA.contacts / 100;
  const results = [];
  for (const version of list(options['contact-versions'])) {
    // Every page in turn, the deep ones included (OFFSET up to 49,900).
    const paths = Array.from({ length: pages }, (_, i) => `/api/${version}/crm/contacts/?page=${i + 1}&page_size=100`);
    const check = await fetch(`${stack.apiUrl}${paths[pages - 1]}`, { headers });
    if (check.status !== 200) throw new Error(`last contacts page: ${check.status}`);
    const cpu = new CpuMeter(stack.processes());
    const wrk = await runWrk({
      baseUrl: stack.apiUrl,
      paths,
      headers,
      connections: options.connections,
      threads: options.threads,
      durationS: options['wrk-duration'],
      dir: stack.dir,
    });
    const used = cpu.used();
    const cpuMsPerRequest = Object.fromEntries(Object.entries(used).map(([name, use]) => [name, (use.seconds * 1000) / wrk.requests]));
    const cores = Object.fromEntries(Object.entries(used).map(([name, use]) => [name, use.cores]));
    results.push({ version, ...wrk, cpuMsPerRequest, cores });
  }
  return results;
}

async function main() {
  process.stderr.write('generating data and starting the API\n');
  const generationStarted = performance.now();
  const stack = await startStack({
    roles: ['api'],
    withoutTemporal: true,
    prepare: generateApiData,
    nodeArgs: { api: options['api-node-args'].split(' ').filter(Boolean) },
    cpuProfile: options['cpu-prof'] ? { roles: ['api'], dir: options['cpu-prof-dir'] } : undefined,
    serviceRoot: options['service-root'] || undefined,
  });
  try {
    const generationS = (performance.now() - generationStarted) / 1000;
    const counts = (
      await stack.db.raw(
        `SELECT (SELECT count(*) FROM contacts) AS contacts, (SELECT count(*) FROM donations) AS donations,
                (SELECT count(*) FROM checkouts) AS checkouts`,
      )
    ).rows[0];
    const machine = await machineInfo(stack.db);
    const headers = { authorization: `Bearer ${stack.staffToken()}` };

    process.stderr.write('crm/donations/\n');
    const donations = await donationsList(stack, headers);
    process.stderr.write('crm/contacts/\n');
    const contacts = await contactPages(stack, headers);

    const results = { machine, options, counts, generationS, donations, contacts };
    const lines = [
      `Machine: ${JSON.stringify(machine)}`,
      `Data: ${JSON.stringify(counts)}, generated and started in ${generationS.toFixed(1)} s`,
      '',
      `crm/donations/ ${API_DATA.period.dateFrom}..${API_DATA.period.dateTo} (${API_DATA.period.donations} donations), median of ${options.runs}:`,
      markdownTable([
        ...donations.api.map(({ times: _times, ...row }) => ({
          what: `API ${row.version}`,
          bytes: row.bytes,
          'median ms': row.medianMs,
          'first byte ms': row.firstByteMs,
          'ratio to plain script': row.medianMs / donations.raw.medianMs,
          'peak RSS growth MiB': row.peakRssGrowthMb,
        })),
        {
          what: 'plain script: same SQL with pg, JSON.stringify',
          bytes: donations.raw.bytes,
          'median ms': donations.raw.medianMs,
          'first byte ms': 0,
          'ratio to plain script': 1,
          'peak RSS growth MiB': donations.raw.peakRssMb - donations.raw.baselineRssMb,
        },
      ]),
      '',
      `crm/contacts/ pages of 100, wrk -t${options.threads} -c${options.connections} -d${options['wrk-duration']}s over all ${API_DATA.contacts / 100} pages:`,
      markdownTable(
        contacts.map((row) => ({
          version: row.version,
          'requests/s': row.requestsPerS,
          'p50 ms': row.latencyMs.p50,
          'p90 ms': row.latencyMs.p90,
          'p99 ms': row.latencyMs.p99,
          requests: row.requests,
          'CPU ms/request api / postgres': `${row.cpuMsPerRequest.api.toFixed(1)} / ${row.cpuMsPerRequest.postgres.toFixed(1)}`,
          'cores api / postgres': `${row.cores.api.toFixed(2)} / ${row.cores.postgres.toFixed(2)}`,
          'non-2xx': row.non2xx,
          errors: row.errors || 'none',
        })),
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (options.out) writeFileSync(options.out, JSON.stringify(results, null, 2));
  } finally {
    await stack.stop();
  }
}

runMain(main);
