import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { flags } from '../stack/cli';
import { markdownTable } from './support/stats';

/**
 * Summarises the .cpuprofile files of a directory (written by `node --cpu-prof`): self time per function and per
 * package, so that a profile can be quoted in BENCHMARKS.md as evidence of what limits a benchmark.
 */
const options = flags({ dir: '', top: 25 });

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** node_modules/<package> (scoped included), our own top folder, or the node internals. */
function owner(url: string): string {
  if (!url) return '(native / idle / gc)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return 'node internals';
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? `ours: ${url.slice(dist + 6).split('/')[0]}` : url.split('/').slice(-2).join('/');
}

function summarise(file: string) {
  const profile: Profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, index) => selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000));
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const name = `${functionName || '(anonymous)'} ${url ? `${path.basename(url)}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    byOwner.set(owner(url), (byOwner.get(owner(url)) ?? 0) + ms);
  }
  const idle = (byFunction.get('(idle)') ?? 0) + (byFunction.get('(program)') ?? 0) * 0;
  const rows = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, options.top)
      .map(([name, ms]) => ({ name, 'self ms': ms, '% of busy': (100 * ms) / (totalMs - idle) }));
  return { totalMs, idle, functions: rows(byFunction), owners: rows(byOwner) };
}

for (const file of readdirSync(options.dir).filter((name) => name.endsWith('.cpuprofile'))) {
  const { totalMs, idle, functions, owners } = summarise(path.join(options.dir, file));
  process.stdout.write(
    `## ${file}\nwall ${(totalMs / 1000).toFixed(1)} s, busy ${((totalMs - idle) / 1000).toFixed(1)} s\n\n` +
      `${markdownTable(owners)}\n\n${markdownTable(functions)}\n\n`,
  );
}
