import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { devServerExecutable } from '../../src/temporal/binaries';
import type { Db } from '../../src/db/knex';

/** What the figures were measured on; these machines are shared and noisy, so every report names its machine. */
export async function machineInfo(db?: Db): Promise<Record<string, string | number>> {
  const cpuModel = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? 'unknown';
  const temporal = devServerExecutable();
  const temporalVersion =
    temporal.type === 'existing-path' ? execFileSync(temporal.path, ['--version'], { encoding: 'utf8' }).trim() : 'unknown';
  const postgres = db ? ((await db.raw('SHOW server_version')).rows[0].server_version as string) : 'n/a';
  return {
    nproc: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    cpu: cpuModel,
    loadAverage1m: os.loadavg()[0],
    node: process.version,
    postgres,
    temporal: temporalVersion,
  };
}
