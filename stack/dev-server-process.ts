import path from 'node:path';
import { devServerExecutable } from '../src/temporal/binaries';
import { type DevServerHandle, startDevServer } from '../src/temporal/dev-server';
import type { StackProcess } from './process';

export interface DevServerProcess extends StackProcess {
  /** Its frontend, `127.0.0.1:<port>`: the same across restarts. */
  readonly address: string;
}

export interface DevServerProcessOptions {
  port: number;
  /** Its state file's folder, so that a restart finds its workflows again; without it the state is in memory. */
  stateDir?: string;
  /** Dynamic configuration, `key=jsonValue` each (`--dynamic-config-value`). */
  dynamicConfig?: readonly string[];
  logDir: string;
}

/**
 * The product's dev server (src/temporal/dev-server.ts: the CLI's `server start-dev`, as `npm start` runs it),
 * headless, as a process of a topology named `temporal`. Only the CLI of `npm run tools`: a drill kills it by its
 * pid, a benchmark reads its CPU, which a server the SDK downloaded and owns would not allow. Its stop is a kill -9
 * of its process group, whatever the signal (the server has persisted everything it answered).
 */
export function devServerProcess(options: DevServerProcessOptions): DevServerProcess {
  const log = path.join(options.logDir, 'temporal.log');
  let server: DevServerHandle | undefined;
  return {
    name: 'temporal',
    log,
    address: `127.0.0.1:${options.port}`,
    async start() {
      if (server) throw new Error('temporal runs already');
      const cli = devServerExecutable();
      if (cli.type !== 'existing-path') throw new Error('The Temporal CLI is missing: run `npm run tools` first');
      const started = await startDevServer({
        dataDir: options.stateDir,
        port: options.port,
        namespace: 'default',
        cliPath: cli.path,
        extraArgs: (options.dynamicConfig ?? []).flatMap((entry) => ['--dynamic-config-value', entry]),
        logFile: log,
        onUnexpectedExit: () => {
          if (server === started) server = undefined;
        },
      });
      server = started;
    },
    // Started is ready: startDevServer resolves once the server answers for its namespace.
    ready: async () => undefined,
    async stop() {
      const stopping = server;
      server = undefined;
      await stopping?.stop();
    },
    pid: () => server?.pid,
  };
}
