import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { createTemporalClient } from '../../src/temporal/client';
import type { WorkerTuning } from '../../src/temporal/worker';
import { CEILING_READY_MESSAGE } from '../ceiling/activities';
import type { Offer } from './platform-load';
import { type ServiceProcess, startService } from './service-process';
import { stopOnSignals } from './stack';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-dev-server';

export const CEILING_TASK_QUEUE = 'bench-ceiling';

/** A delivered envelope of the service and the transaction id in it, which the ceiling replaces by each event's key. */
export interface EnvelopeTemplate {
  payload: string;
  transactionId: string;
}

export interface CeilingStack {
  temporal: TemporalDevServer;
  worker: ServiceProcess;
  client: Client;
  /** Starts one ceiling workflow per event, its body the template with the event's key as transaction id. */
  offer(template: EnvelopeTemplate): Offer;
  stop(): Promise<void>;
}

/**
 * The ceiling of one workflow per event: the same Temporal dev server, a worker process with the same settings
 * (bench/ceiling/worker.ts), and a client in the bench process starting one workflow per event whose local activity
 * POSTs the service's real envelope to the same subscriber. No Postgres, no API, no relay.
 */
export async function startCeilingStack(options: {
  subscriberUrl: string;
  tuning: WorkerTuning;
  temporalDynamicConfig?: string[];
}): Promise<CeilingStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-ceiling-'));
  await chmod(dir, 0o755);
  const stops: Array<() => Promise<void>> = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const step of stops.reverse()) await step().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    })());
  stops.push(stopOnSignals(stop));
  try {
    const temporal = await startTemporalDevServer(path.join(dir, 'temporal.log'), options.temporalDynamicConfig);
    stops.push(() => temporal.stop());
    const worker = await startService('worker', {
      env: {},
      logFile: path.join(dir, 'worker.log'),
      script: {
        path: path.join(__dirname, '..', 'ceiling', 'worker.js'),
        args: [temporal.address, CEILING_TASK_QUEUE, options.subscriberUrl, JSON.stringify(options.tuning)],
        readyMessage: CEILING_READY_MESSAGE,
      },
    });
    stops.push(() => worker.stop());
    // The relay's client: the same connection settings and retries.
    const client = createTemporalClient({ address: temporal.address, namespace: 'default' });
    stops.push(() => client.connection.close());
    return {
      temporal,
      worker,
      client,
      offer: (template) => async (key) => {
        try {
          await client.workflow.start('ceilingDelivery', {
            taskQueue: CEILING_TASK_QUEUE,
            workflowId: key,
            args: [template.payload.replaceAll(template.transactionId, key)],
            workflowTaskTimeout: '10 seconds',
          });
          return true;
        } catch {
          return false;
        }
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
