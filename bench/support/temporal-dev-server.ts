import { type ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { devServerExecutable } from '../../src/temporal/binaries';
import { createTemporalClient } from '../../src/temporal/client';
import { DEV_SERVER_ARGS } from '../../src/temporal/dev-server';
import { freePort } from '../../test/support/free-port';

export interface TemporalDevServer {
  address: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The project's Temporal CLI dev server, headless and in memory, as a child process of its own (so its CPU and
 * memory can be read from /proc). `dynamicConfig` entries are `key=jsonValue`.
 */
export async function startTemporalDevServer(logFile: string, dynamicConfig: string[] = []): Promise<TemporalDevServer> {
  const executable = devServerExecutable();
  if (executable.type !== 'existing-path') throw new Error('Temporal CLI not found: run `npm run tools` first');
  const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const log = openSync(logFile, 'a');
  const child: ChildProcess = spawn(
    executable.path,
    [
      ...['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port)],
      ...['--http-port', String(httpPort), '--metrics-port', String(metricsPort), '--log-level', 'warn', ...DEV_SERVER_ARGS],
      ...dynamicConfig.flatMap((entry) => ['--dynamic-config-value', entry]),
    ],
    { stdio: ['ignore', log, log] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Temporal dev server exited (code ${child.exitCode}); see ${logFile}`);
    try {
      const { connection } = createTemporalClient({ address, namespace: 'default' });
      try {
        await connection.withDeadline(Date.now() + 1_000, () => connection.workflowService.describeNamespace({ namespace: 'default' }));
        break;
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return {
    address,
    pid: child.pid ?? 0,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
