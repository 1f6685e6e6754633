import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { TypedSearchAttributes } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DELIVERY_SEARCH_ATTRIBUTES } from '../delivery-rules/search-attributes';
import { devServerExecutable } from './binaries';
import { devServerUiUrl } from './ui';

/**
 * `temporal server start-dev` arguments that register the delivery workflows' search attributes, so that they can
 * start (a workflow carrying an unknown one is refused) and Temporal UI lists them. For every dev server: ours, the
 * tests', the benchmarks' and the drills'. A no-op when the state file knows them already.
 */
export const SEARCH_ATTRIBUTE_ARGS: readonly string[] = DELIVERY_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => [
  '--search-attribute',
  `${name}=${TypedSearchAttributes.toMetadataType(type)}`,
]);

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

/**
 * Starts the Temporal CLI dev server with its Web UI. Its state is file-backed under the data directory, so
 * workflows sleeping in retry backoff survive a restart of `npm start`.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServerHandle> {
  await mkdir(options.dataDir, { recursive: true });
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: devServerExecutable(options.cliPath),
      ip: '127.0.0.1',
      port: options.port,
      ui: true,
      uiPort: options.uiPort,
      namespace: options.namespace,
      dbFilename: path.join(options.dataDir, 'temporal.sqlite'),
      extraArgs: ['--log-level', 'warn', ...SEARCH_ATTRIBUTE_ARGS],
    },
  });
  return {
    address: `127.0.0.1:${options.port}`,
    uiUrl: devServerUiUrl(options.uiPort),
    stop: () => env.teardown(),
  };
}
