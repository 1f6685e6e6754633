import { appendFileSync } from 'node:fs';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { connectDatabase, connectTemporal } from '../../src/runtime/infrastructure';
import { Lifecycle } from '../../src/runtime/lifecycle';
import { createTemporalClient } from '../../src/temporal/client';
import { startOutboxRelay } from '../../src/temporal/outbox-relay';

/** One workflow start as the relay made it: wall-clock ms when it was sent and when Temporal answered. */
export interface TracedStart {
  workflowId: string;
  sentAtMs: number;
  answeredAtMs: number;
  ok: boolean;
}

/**
 * Relay options the production role does not expose, to find out what would make it keep up: `loops` relays in this
 * one process (each its own LISTEN and passes; SKIP LOCKED shares the rows, as between relay processes), their batch
 * size and fallback poll interval. Unset: one relay with the role's defaults.
 */
export interface RelayTuning {
  loops?: number;
  batchSize?: number;
  pollIntervalMs?: number;
  maxConcurrentPasses?: number;
}

/**
 * The service's relay role (`node dist/src/main.js relay`) with each workflow start timed, the times appended as JSON
 * lines to the file named by argv[2] (flushed every 200 ms): where a relay pass spends its time under a backlog.
 * argv[3] is a RelayTuning as JSON.
 */
async function main() {
  const traceFile = process.argv[2];
  if (!traceFile) throw new Error('usage: traced-relay.js <trace file> [relay tuning JSON]');
  const { loops = 1, ...relayOptions } = JSON.parse(process.argv[3] ?? '{}') as RelayTuning;
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const lifecycle = new Lifecycle(log);
  lifecycle.exitOnSignals();
  const db = await connectDatabase(config, log, lifecycle, 'external-required');
  const temporal = await connectTemporal(config, log, lifecycle, 'external-required');
  const client = createTemporalClient({ ...temporal.connection, namespace: config.temporal.namespace });
  lifecycle.onStop(() => client.connection.close());

  let buffered: string[] = [];
  const flush = () => {
    if (buffered.length > 0) appendFileSync(traceFile, buffered.join(''));
    buffered = [];
  };
  const flusher = setInterval(flush, 200);
  const start = client.workflow.start.bind(client.workflow);
  client.workflow.start = (async (...args: Parameters<typeof start>) => {
    const sentAtMs = Date.now();
    const trace = (ok: boolean) => {
      const line: TracedStart = { workflowId: args[1].workflowId, sentAtMs, answeredAtMs: Date.now(), ok };
      buffered.push(`${JSON.stringify(line)}\n`);
    };
    try {
      const handle = await start(...args);
      trace(true);
      return handle;
    } catch (err) {
      trace(false);
      throw err;
    }
  }) as typeof client.workflow.start;

  const relays = Array.from({ length: loops }, () => startOutboxRelay({ db, client, taskQueue: config.temporal.taskQueue, log, ...relayOptions }));
  lifecycle.onStop(async () => {
    await Promise.all(relays.map((relay) => relay.stop()));
    clearInterval(flusher);
    flush();
  });
  log.info({ traceFile, loops, ...relayOptions }, 'outbox relay running');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
