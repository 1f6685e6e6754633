import type { Readable } from 'node:stream';
import type { Config } from '../config';

/** What a command-line tool gets from its process; the tests pass their own. */
export interface CliIo {
  argv: string[];
  config: Config;
  stdin: Readable;
  stdout: (line: string) => void;
}

/** Runs a tool as the process's main module: its result is the exit code, a thrown error exit code 1. */
export function runAsMain(name: string, tool: (io: CliIo) => Promise<number>, config: () => Config): void {
  const fail = (err: unknown) => {
    process.stderr.write(`${name} failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  };
  Promise.resolve()
    .then(() =>
      tool({
        argv: process.argv.slice(2),
        config: config(),
        stdin: process.stdin,
        stdout: (line) => process.stdout.write(`${line}\n`),
      }),
    )
    .then((code) => process.exit(code), fail);
}
