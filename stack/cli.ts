import { parseArgs } from 'node:util';

/** The command lines of the tooling: `npm run stack`, and the benchmarks and drills that build on stack/. */

/** `--name=value` flags with defaults; numbers stay numbers, lists are comma separated. */
export function flags<T extends Record<string, string | number | boolean>>(defaults: T, args = process.argv.slice(2)): T {
  const { values } = parseArgs({
    args,
    options: Object.fromEntries(
      Object.entries(defaults).map(([name, value]) => [name, { type: typeof value === 'boolean' ? 'boolean' : 'string' }]),
    ) as Record<string, { type: 'string' | 'boolean' }>,
    strict: true,
  });
  const result: Record<string, string | number | boolean> = { ...defaults };
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    result[name] = typeof defaults[name] === 'number' ? Number(value) : value;
  }
  return result as T;
}

export const list = (value: string) => value.split(',').map((item) => item.trim()).filter(Boolean);

/** `KEY=value;KEY2=value` (a value may hold `=` and `,`, not `;`) as an object: extra environment for a benchmark's processes. */
export const keyValues = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split(';')
      .map((pair) => pair.trim())
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );

/** Runs a benchmark's main function; a failure prints its stack and exits 1, so a scripted series sees it. */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
