import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

export interface WrkResult {
  requestsPerS: number;
  latencyMs: { p50: number; p75: number; p90: number; p99: number };
  requests: number;
  non2xx: number;
  errors: string;
}

const toMs = (value: string) => {
  const [, number, unit] = value.match(/^([\d.]+)(us|ms|s|m)$/) ?? [];
  return Number(number) * ({ us: 0.001, ms: 1, s: 1000, m: 60_000 }[unit] ?? Number.NaN);
};

/**
 * wrk (Debian package) against `paths` in turn, each request with the given headers, over `connections`
 * connections; latency percentiles from its --latency report.
 */
export async function runWrk(options: {
  baseUrl: string;
  paths: string[];
  headers: Record<string, string>;
  connections: number;
  threads: number;
  durationS: number;
  dir: string;
}): Promise<WrkResult> {
  const script = path.join(options.dir, 'paths.lua');
  const headers = Object.entries(options.headers)
    .map(([name, value]) => `[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join(', ');
  await writeFile(
    script,
    `local paths = { ${options.paths.map((p) => JSON.stringify(p)).join(', ')} }
local counter = 0
local headers = { ${headers} }
request = function()
  counter = counter + 1
  return wrk.format("GET", paths[(counter % #paths) + 1], headers)
end
`,
  );
  const { stdout } = await promisify(execFile)('wrk', [
    `-t${options.threads}`,
    `-c${options.connections}`,
    `-d${options.durationS}s`,
    '--latency',
    '-s',
    script,
    options.baseUrl,
  ]);
  const percentile = (p: number) => toMs(stdout.match(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm'))?.[1] ?? '');
  return {
    requestsPerS: Number(stdout.match(/Requests\/sec:\s+([\d.]+)/)?.[1]),
    latencyMs: { p50: percentile(50), p75: percentile(75), p90: percentile(90), p99: percentile(99) },
    requests: Number(stdout.match(/(\d+) requests in/)?.[1]),
    non2xx: Number(stdout.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0),
    errors: stdout.match(/Socket errors:.*$/m)?.[0] ?? '',
  };
}
