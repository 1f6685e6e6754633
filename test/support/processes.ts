import { readdirSync, readFileSync } from 'node:fs';

export interface RunningProcess {
  pid: number;
  command: string;
}

/**
 * The processes on this machine whose command line contains `text` (read from /proc): for checking that a start
 * left nothing running behind it. A process that has ended but was not yet reaped has no command line any more and
 * does not count.
 */
export function processesMentioning(text: string): RunningProcess[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
        return command.includes(text) ? [{ pid: Number(name), command }] : [];
      } catch {
        return []; // ended while we looked
      }
    });
}
