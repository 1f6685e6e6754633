import { Client, Connection, type ConnectionPlugin } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { DELIVERY_SEARCH_ATTRIBUTES } from '../../src/delivery-rules/search-attributes';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { devServerExecutable, testServerExecutable } from '../../src/temporal/binaries';
import { retriesEndingWithTheConnection } from '../../src/temporal/closed-connection';
import { DEV_SERVER_ARGS, type DevServerHandle, startDevServer } from '../../src/temporal/dev-server';
import { freePort } from './free-port';

// Worker state changes at INFO drown the test output; warnings and errors still show. The Rust core warns on every
// worker start that the time-skipping server lacks a heartbeat capability it does not need here: errors only there.
try {
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }) } },
  });
} catch {
  // Already installed by another test file in this worker process.
}

/**
 * The test environments' client connections retry as the SDK's do, but a retry whose connection was closed meanwhile
 * (a test ended while Temporal did not answer) fails its call: from the SDK's timer it would throw "Channel has been
 * shut down" into whichever test file the Jest worker runs next, and fail that file.
 */
export const RETRIES_END_WITH_THE_CONNECTION: ConnectionPlugin = {
  name: 'retries-end-with-the-connection',
  configureConnection: (options) => ({ ...options, interceptors: retriesEndingWithTheConnection() }),
};

/**
 * The time-skipping test server, from the project's .tools folder when present (no download needed), with the
 * delivery workflows' search attributes registered, as the dev server and the Compose namespace job register them.
 */
export async function createTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: testServerExecutable(process.env.TEMPORAL_TEST_SERVER_PATH) },
    plugins: [RETRIES_END_WITH_THE_CONNECTION],
  });
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(DELIVERY_SEARCH_ATTRIBUTES.map(({ name, type }) => [name, encodeSearchAttributeIndexedValueType(type)!])),
  });
  return env;
}

/**
 * The Temporal CLI dev server with `npm start`'s arguments in the SDK's test environment (its connections and
 * teardown), namespace `default`, logging errors only; on `port` when the test must know it first (a client made
 * before the server is up), with `extraArgs` added (a metrics port). Real time: nothing skips.
 */
export function createDevServerEnvironment({ port, extraArgs = [] }: { port?: number; extraArgs?: string[] } = {}): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: devServerExecutable(process.env.TEMPORAL_CLI_PATH),
      ip: '127.0.0.1',
      port,
      namespace: 'default',
      extraArgs: ['--log-level', 'error', ...extraArgs, ...DEV_SERVER_ARGS],
    },
    plugins: [RETRIES_END_WITH_THE_CONNECTION],
  });
}

/**
 * The Temporal CLI dev server as `npm start` runs it (src/temporal/dev-server.ts: search attributes registered, Web
 * UI on), on free ports with its state in a temporary folder, for what the time-skipping server cannot do (listing
 * workflows by search attribute). Real time: nothing skips.
 */
export async function startTestDevServer(): Promise<DevServerHandle> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'temporal-dev-'));
  const server = await startDevServer({ dataDir, port: await freePort(), uiPort: await freePort(), namespace: 'default', cliPath: process.env.TEMPORAL_CLI_PATH });
  return {
    ...server,
    async stop() {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** startTestDevServer's server with a client and a worker's connection to it. */
export interface ConnectedDevServer {
  client: Client;
  nativeConnection: NativeConnection;
  /** Closes both connections, then stops the server. */
  close(): Promise<void>;
}

export async function startConnectedTestDevServer(): Promise<ConnectedDevServer> {
  const server = await startTestDevServer();
  try {
    const connection = await Connection.connect({ address: server.address, plugins: [RETRIES_END_WITH_THE_CONNECTION] });
    const nativeConnection = await NativeConnection.connect({ address: server.address }).catch(async (err: unknown) => {
      await connection.close();
      throw err;
    });
    return {
      client: new Client({ connection }),
      nativeConnection,
      async close() {
        await nativeConnection.close();
        await connection.close();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}
