import type { WorkerTuning } from '../../src/temporal/worker';
import type { RelayTuning } from './traced-relay';

const NUMERIC = [
  'maxCachedWorkflows',
  'maxConcurrentWorkflowTaskExecutions',
  'maxConcurrentLocalActivityExecutions',
  'nonStickyToStickyPollRatio',
] as const;

/** The relay's settings, given among the worker's with a `relay.` prefix (only the service has a relay). */
const RELAY = ['relay.loops', 'relay.batchSize', 'relay.pollIntervalMs', 'relay.maxConcurrentPasses'] as const;

/**
 * How the service runs its relay and worker: as the separate `relay` and `worker` roles (the bench's variants of
 * them, support/traced-relay.ts and support/tuned-worker.ts), or `combined` in the production `delivery` role, whose
 * relay starts workflows eagerly on the worker's connection. The combined role takes no tuning.
 */
export type ServiceLayout = 'separate' | 'combined';

export interface NamedTuning {
  name: string;
  tuning: WorkerTuning;
  relay: RelayTuning;
  layout: ServiceLayout;
  /** Tracing on, keeping this ratio of traces (support/otlp-sink.ts receives them); absent: tracing off. */
  tracing?: number;
}

function setting(named: NamedTuning, key: string, value: string): void {
  const { tuning, relay } = named;
  if (key === 'layout') {
    if (value !== 'separate' && value !== 'combined') throw new Error(`layout: "${value}" is neither separate nor combined`);
    named.layout = value;
    return;
  }
  if (key === 'tracing') {
    const ratio = Number(value);
    if (value === '' || !(ratio >= 0 && ratio <= 1)) throw new Error(`tracing: "${value}" is not a sampling ratio between 0 and 1`);
    named.tracing = ratio;
    return;
  }
  if (key === 'workflowTaskPollerBehavior') {
    // `autoscaling` or `autoscaling/<maximum>`; `simple/<maximum>` for a fixed maximum.
    const [type, maximum] = value.split('/');
    if (type === 'autoscaling') tuning.workflowTaskPollerBehavior = { type: 'autoscaling', ...(maximum ? { maximum: Number(maximum) } : {}) };
    else if (type === 'simple' && maximum) tuning.workflowTaskPollerBehavior = { type: 'simple-maximum', maximum: Number(maximum) };
    else throw new Error(`workflowTaskPollerBehavior: "${value}" is neither autoscaling[/max] nor simple/<max>`);
    return;
  }
  const known = [...NUMERIC, ...RELAY] as readonly string[];
  if (!known.includes(key)) throw new Error(`unknown worker setting "${key}"; use one of ${[...known, 'workflowTaskPollerBehavior'].join(', ')}`);
  const number = Number(value);
  if (value === '' || !Number.isFinite(number) || number < 0) throw new Error(`${key}: "${value}" is not a number`);
  if (key.startsWith('relay.')) (relay as Record<string, number>)[key.slice('relay.'.length)] = number;
  else (tuning as Record<string, number>)[key] = number;
}

/**
 * Worker settings to compare, from a flag: `name:key=value,key=value;name2:…`, keys being the SDK's option names
 * (src/temporal/worker.ts, WorkerTuning) or the relay's with a `relay.` prefix (support/traced-relay.ts, RelayTuning), or
 * `layout=combined` (ServiceLayout), or `tracing=<ratio>` (the service's traces exported, that ratio sampled). A name
 * alone stands for the defaults:
 * `default;polls50:workflowTaskPollerBehavior=simple/50,nonStickyToStickyPollRatio=1;combined:layout=combined`.
 */
export function parseTunings(text: string): NamedTuning[] {
  const tunings = text
    .split(';')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const colon = entry.indexOf(':');
      const name = (colon < 0 ? entry : entry.slice(0, colon)).trim();
      const named: NamedTuning = { name, tuning: {}, relay: {}, layout: 'separate' };
      const pairs = colon < 0 ? [] : entry.slice(colon + 1).split(',').map((pair) => pair.trim()).filter(Boolean);
      for (const pair of pairs) {
        const equals = pair.indexOf('=');
        if (equals < 1) throw new Error(`"${pair}" in tuning "${name}" is not key=value`);
        setting(named, pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
      }
      if (named.layout === 'combined' && Object.keys(named.tuning).length + Object.keys(named.relay).length > 0) {
        throw new Error(`tuning "${name}": layout=combined runs the production delivery role, which takes no worker or relay setting`);
      }
      return named;
    });
  const names = tunings.map((tuning) => tuning.name);
  if (names.some((name, index) => name === '' || names.indexOf(name) !== index)) throw new Error(`tuning names must be given and distinct: ${text}`);
  return tunings;
}
