import { makeTelemetryFilterString, Runtime, type RuntimeOptions } from '@temporalio/worker';
import type { Logger } from '../logger';
import { freePort } from '../shared/free-port';
import { withTimeLimit } from '../shared/time-limit';
import { temporalLogger } from './logging';

/** The Temporal SDK's own worker metrics, in Prometheus text, to be served after ours on the same /metrics. */
export interface TemporalSdkMetrics {
  /** The SDK's metrics as they are now; empty when its exporter does not answer (logged), so ours are still served. */
  scrape(): Promise<string>;
}

/**
 * Workflow task schedule-to-start is milliseconds when the worker keeps up and seconds when it does not; the SDK's
 * default buckets (0.1 s, 0.5 s, 1 s, 5 s, …) cannot tell 20 ms from 90 ms.
 */
const SCHEDULE_TO_START_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** As for our Postgres gauges: a scrape must not hang on one part. */
const SCRAPE_LIMIT_MS = 2_000;
/** Another process may take the free port between our look and the exporter's bind. */
const BIND_TRIES = 3;

function runtimeOptions(log: Logger, metricsPort: number | undefined): RuntimeOptions {
  return {
    logger: temporalLogger(log),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(metricsPort === undefined
        ? {}
        : {
            metrics: {
              // Prometheus conventions, as our own metrics follow them: seconds, counters ending in _total.
              prometheus: {
                bindAddress: `127.0.0.1:${metricsPort}`,
                countersTotalSuffix: true,
                unitSuffix: true,
                useSecondsForDurations: true,
                histogramBucketOverrides: { workflow_task_schedule_to_start_latency: SCHEDULE_TO_START_BUCKETS_SECONDS },
              },
            },
          }),
    },
  };
}

/**
 * Reads the SDK's exporter. Its text follows ours in one answer: the families do not overlap (the SDK's all start with
 * `temporal_`), so the concatenation is one valid exposition, scraped with ours under the same token.
 */
function sdkMetricsAt(port: number, log: Logger): TemporalSdkMetrics {
  const url = `http://127.0.0.1:${port}/metrics`;
  return {
    async scrape() {
      try {
        const response = await withTimeLimit(fetch(url), SCRAPE_LIMIT_MS, 'the Temporal SDK metrics exporter');
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return await response.text();
      } catch (err) {
        log.warn({ err }, 'Temporal SDK metrics not collected');
        return '';
      }
    },
  };
}

/**
 * Installs the SDK runtime with our logger (the Rust core's warnings forwarded to it too) and, with `exportMetrics`,
 * the SDK's Prometheus exporter on a free loopback port, which /metrics reads and appends (TemporalSdkMetrics). Once
 * per process, before the first worker connection: the runtime is created here and cannot be changed afterwards.
 *
 * Why the exporter rather than the SDK's buffered metrics: the Rust core aggregates (counters, histograms) itself and
 * hands over text only when scraped, while a buffer brings every single update across into JavaScript (dozens per
 * workflow task) and drops updates when it is not drained in time. The price is a listener on loopback without the
 * metrics token; it is not published, and what it tells (task queue, workflow types, counts) is also in our /metrics.
 */
export async function installTemporalRuntime(log: Logger, { exportMetrics }: { exportMetrics: boolean }): Promise<TemporalSdkMetrics | undefined> {
  if (!exportMetrics) {
    Runtime.install(runtimeOptions(log, undefined));
    return undefined;
  }
  for (let tries = 1; ; tries++) {
    const port = await freePort();
    try {
      Runtime.install(runtimeOptions(log, port));
      return sdkMetricsAt(port, log);
    } catch (err) {
      if (tries >= BIND_TRIES || !/address already in use/i.test((err as Error).message)) throw err;
    }
  }
}
