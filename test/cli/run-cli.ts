import { Readable } from 'node:stream';
import type { CliIo } from '../../src/cli/io';
import { loadConfig } from '../../src/config';

/** Runs a command-line tool against the database at `url`, as its process would, and collects what it prints. */
export async function runCli(
  tool: (io: CliIo) => Promise<number>,
  url: string,
  argv: string[],
  { env = {}, stdin = '' }: { env?: Record<string, string>; stdin?: string } = {},
) {
  const lines: string[] = [];
  const code = await tool({
    argv,
    config: loadConfig({ DATABASE_URL: url, ...env }),
    stdin: Readable.from([stdin]),
    stdout: (line) => lines.push(line),
  });
  return { code, output: lines.join('\n') };
}
