import path from 'node:path';
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { TypedSearchAttributes } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DELIVERY_SEARCH_ATTRIBUTES } from '../delivery-rules/search-attributes';
import { devServerExecutable } from './binaries';
import { devServerUiUrl } from './ui';

/**
 * `temporal server start-dev` arguments for every dev server: ours, the tests', the benchmarks' and the drills'.
 * They register the delivery workflows' search attributes, so that they can start (a workflow carrying an unknown
 * one is refused) and Temporal UI lists them (a no-op when the state file knows them already), and switch on eager
 * workflow start, which the server leaves off unless told (docker-compose.yml does the same in its dynamic config).
 */
export const DEV_SERVER_ARGS: readonly string[] = [
  ...DELIVERY_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => ['--search-attribute', `${name}=${TypedSearchAttributes.toMetadataType(type)}`]),
  ...['--dynamic-config-value', 'system.enableEagerWorkflowStart=true'],
];

export interface DevServerOptions {
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  cliPath?: string;
}

export interface DevServerHandle {
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

const STATE_FILE = 'temporal.sqlite';

/**
 * The state holds workflow histories and activity results: for this user only. The folder is 0700, and files kept
 * from earlier starts are made 0600; the server creates new ones under umask 077 (below).
 */
async function preparePrivateState(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  for (const name of await readdir(dataDir)) {
    if (name.startsWith(STATE_FILE)) await chmod(path.join(dataDir, name), 0o600);
  }
  return path.join(dataDir, STATE_FILE);
}

/**
 * Starts the Temporal CLI dev server with its Web UI. Its state is file-backed under the data directory, so
 * workflows sleeping in retry backoff survive a restart of `npm start`.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServerHandle> {
  const dbFilename = await preparePrivateState(options.dataDir);
  // The server process inherits the umask it is started with: its database and journal files are created 0600.
  const umask = process.umask(0o077);
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: devServerExecutable(options.cliPath),
      ip: '127.0.0.1',
      port: options.port,
      ui: true,
      uiPort: options.uiPort,
      namespace: options.namespace,
      dbFilename,
      extraArgs: ['--log-level', 'warn', ...DEV_SERVER_ARGS],
    },
  }).finally(() => process.umask(umask));
  return {
    address: `127.0.0.1:${options.port}`,
    uiUrl: devServerUiUrl(options.uiPort),
    stop: () => env.teardown(),
  };
}
