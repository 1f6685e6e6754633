import { type DrillCluster, startDrillCluster } from './cluster';
import { configureEndpoint } from './platform-load';
import type { ChildProcessEntry } from '../../stack/child-process';
import { progress } from './report';
import { type RecordingSubscriber, startRecordingSubscriber } from './subscriber';

export interface DrillStage {
  log: (message: string) => void;
  cluster: DrillCluster;
  subscriber: RecordingSubscriber;
}

/** What every drill starts from: a cluster of its own and a recording subscriber, both stopped when the drill ends. */
export async function setUpDrill(
  name: string,
  onCleanup: (stop: () => Promise<void>) => void,
  {
    subscriberDelayMs,
    failuresPerEvent,
    temporalDynamicConfig,
  }: { subscriberDelayMs: number; failuresPerEvent?: number; temporalDynamicConfig?: string[] },
): Promise<DrillStage> {
  const log = progress(Date.now());
  const cluster = await startDrillCluster(name, { temporalDynamicConfig });
  onCleanup(() => cluster.stop());
  const subscriber = await startRecordingSubscriber({ delayMs: subscriberDelayMs, failuresPerEvent });
  onCleanup(() => subscriber.close());
  return { log, cluster, subscriber };
}

/** The whole service, up before any fault: Temporal, the API, a relay and a worker, delivering to the subscriber. */
export async function startService({ cluster, subscriber }: DrillStage): Promise<{ api: ChildProcessEntry; relay: ChildProcessEntry; worker: ChildProcessEntry }> {
  await cluster.startTemporal();
  const api = await cluster.startApi();
  const relay = await cluster.startRelay();
  const worker = await cluster.startWorker();
  await configureEndpoint(cluster, subscriber.url);
  return { api, relay, worker };
}
