import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Db } from '../../src/db/knex';
import { freePort } from '../../src/shared/free-port';
import { createTemporalClient } from '../../src/temporal/client';
import type { WorkerTuning } from '../../src/temporal/worker';
import { type ChildProcessEntry, childProcess } from '../../stack/child-process';
import { type DevServerProcess, devServerProcess } from '../../stack/dev-server-process';
import { type Launcher, launcher } from '../../stack/launcher';
import { CEILING_READY_MESSAGE } from '../ceiling/activities';
import type { CeilingTemporal, EnvelopeTemplate, StartAnswer, StartOptions, StartRequest } from '../ceiling/starts';
import type { Offer } from './platform-load';
import { stopOnSignals } from './stack';

export const CEILING_TASK_QUEUE = 'bench-ceiling';

export type { EnvelopeTemplate };

export interface CeilingStack {
  temporal: DevServerProcess;
  worker: ChildProcessEntry;
  /** For reading the ceiling's workflow histories. */
  client: Client;
  /** Asks the ceiling's process to start one workflow per event, its body the template with the event's key. */
  offer: Offer;
  stop(): Promise<void>;
}

/**
 * Sends start requests over the IPC channel and resolves each with the process's answer to it; false for every
 * request the process can no longer answer (it exited, or its channel is closed).
 */
function startRequests(child: ChildProcess): Offer {
  const waiting = new Map<number, (started: boolean) => void>();
  let requests = 0;
  child.on('message', ({ request, started }: StartAnswer) => {
    waiting.get(request)?.(started);
    waiting.delete(request);
  });
  child.once('exit', () => {
    for (const answer of waiting.values()) answer(false);
    waiting.clear();
  });
  return (key) =>
    new Promise((resolve) => {
      if (!child.connected) return resolve(false);
      const request = ++requests;
      waiting.set(request, resolve);
      const message: StartRequest = { request, key };
      child.send(message, (err) => {
        if (!err) return;
        waiting.delete(request);
        resolve(false);
      });
    });
}

/** The last envelope the service delivered, the model of the ceiling's bodies. */
export async function captureTemplate(db: Db): Promise<EnvelopeTemplate> {
  const { payload } = await db('webhook_events').orderBy('id', 'desc').first('payload');
  const transactionId = (JSON.parse(payload) as { data: { donation: { payment: { transaction_id: string } } } }).data.donation.payment
    .transaction_id;
  return { payload, transactionId };
}

export interface CeilingWorkerOptions {
  /** Where the worker finds Temporal (the dev server, or the stack's frontend with its client certificate). */
  temporal: CeilingTemporal;
  subscriberUrl: string;
  tuning: WorkerTuning;
  template: EnvelopeTemplate;
  start: StartOptions;
  /** The topology it joins, stopped with it. */
  processes: Launcher;
  /** Where its log goes: `ceiling-worker.log`. */
  logDir: string;
  /** Run it with `node --cpu-prof`, its profiles written to this directory when it stops. */
  cpuProfileDir?: string;
}

/**
 * The ceiling's process (bench/ceiling/worker.ts): a worker of the delivery worker's settings and a client on its
 * connection, which starts one workflow per event when the bench asks; the workflow's local activity POSTs the
 * service's real envelope to the same subscriber.
 */
export async function startCeilingWorker(options: CeilingWorkerOptions): Promise<{ worker: ChildProcessEntry; offer: Offer }> {
  const worker = childProcess(
    {
      name: 'ceiling-worker',
      command: process.execPath,
      args: [
        ...(options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : []),
        path.join(__dirname, '..', 'ceiling', 'worker.js'),
        JSON.stringify(options.temporal),
        CEILING_TASK_QUEUE,
        options.subscriberUrl,
        JSON.stringify(options.tuning),
        JSON.stringify(options.template),
        JSON.stringify(options.start),
      ],
      env: process.env,
      stopGraceMs: 60_000,
      ready: { logLine: CEILING_READY_MESSAGE },
    },
    { logDir: options.logDir, readyTimeoutMs: 120_000, ipc: true },
  );
  await options.processes.start(worker);
  return { worker, offer: startRequests(worker.process()!) };
}

/**
 * The ceiling of one workflow per event on the Temporal dev server: the same dev server binary started afresh and the
 * ceiling's process (startCeilingWorker). No Postgres, no API.
 */
export async function startCeilingStack(options: {
  subscriberUrl: string;
  tuning: WorkerTuning;
  template: EnvelopeTemplate;
  start: StartOptions;
  temporalDynamicConfig?: string[];
  cpuProfileDir?: string;
}): Promise<CeilingStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-ceiling-'));
  await chmod(dir, 0o755);
  const processes = launcher();
  let client: Client | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await removeSignalHandlers();
      await client?.connection.close().catch(() => undefined);
      await processes.stop();
      await rm(dir, { recursive: true, force: true });
    })());
  const removeSignalHandlers = stopOnSignals(stop);
  try {
    const temporal = devServerProcess({ port: await freePort(), dynamicConfig: options.temporalDynamicConfig, logDir: dir });
    await processes.start(temporal);
    const { worker, offer } = await startCeilingWorker({ ...options, temporal: { address: temporal.address }, processes, logDir: dir });
    client = createTemporalClient({ address: temporal.address, namespace: 'default' });
    return { temporal, worker, client, offer, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
