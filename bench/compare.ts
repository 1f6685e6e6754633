import { readFileSync } from 'node:fs';
import path from 'node:path';
import { flags, list } from '../stack/cli';
import { markdownTable, median } from './support/stats';

/**
 * Medians of repeated delivery runs (the JSON written with --out), one column per variant, so that a before/after
 * pair measured alternately on a noisy machine can be compared: `--variants=before:/tmp/ab/base-*.json,...`
 * is spelled here as `--files=a.json,b.json --labels=before,after` with the label of each file.
 */
const options = flags({ files: '', labels: '' });

interface Run {
  phases: Array<{ phase: string; ratePerS: number; p50: number; p95: number; p99: number; cpuMsPerEvent: Record<string, number> }>;
  bare: { ratePerS: number };
  ratioToBare: number;
}

const files = list(options.files);
const labels = list(options.labels);
const runs = new Map<string, Run[]>();
files.forEach((file, index) => {
  const label = labels[index] ?? path.basename(file);
  runs.set(label, [...(runs.get(label) ?? []), JSON.parse(readFileSync(file, 'utf8')) as Run]);
});

const metrics: Array<[string, (run: Run) => number]> = [];
const phaseNames = [...runs.values()][0][0].phases.map((phase) => phase.phase);
for (const phase of phaseNames) {
  const pick = (run: Run) => run.phases.find((p) => p.phase === phase)!;
  metrics.push([`${phase}: delivered/s`, (run) => pick(run).ratePerS]);
  metrics.push([`${phase}: p50 ms`, (run) => pick(run).p50]);
  metrics.push([`${phase}: p95 ms`, (run) => pick(run).p95]);
  metrics.push([`${phase}: p99 ms`, (run) => pick(run).p99]);
  for (const name of ['api', 'relay', 'worker', 'postgres', 'temporal']) {
    metrics.push([`${phase}: CPU ms/event ${name}`, (run) => pick(run).cpuMsPerEvent[name]]);
  }
  metrics.push([
    `${phase}: CPU ms/event service total`,
    (run) => ['api', 'relay', 'worker', 'postgres', 'temporal'].reduce((sum, name) => sum + pick(run).cpuMsPerEvent[name], 0),
  ]);
}
metrics.push(['bare loop/s', (run) => run.bare.ratePerS], ['max / bare %', (run) => run.ratioToBare * 100]);

process.stdout.write(
  `${markdownTable(
    metrics.map(([name, value]) => ({
      metric: name,
      ...Object.fromEntries([...runs].map(([label, group]) => [`${label} (median of ${group.length})`, median(group.map(value))])),
    })),
  )}\n`,
);
