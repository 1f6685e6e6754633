import os from 'node:os';

export interface DrillOutcome {
  passed: boolean;
  details: Record<string, unknown>;
}

/**
 * Runs a drill: `body` registers what it starts with `onCleanup`; everything is stopped (in reverse order) before the
 * verdict is printed, also after a failure, so that no process of the drill outlives it.
 */
export async function runDrill(name: string, body: (onCleanup: (stop: () => Promise<void>) => void) => Promise<DrillOutcome>): Promise<void> {
  const stops: Array<() => Promise<void>> = [];
  let outcome: DrillOutcome | undefined;
  let failure: unknown;
  try {
    outcome = await body((stop) => stops.push(stop));
  } catch (err) {
    failure = err;
  }
  for (const stop of stops.reverse()) await stop().catch((err: Error) => process.stderr.write(`cleanup: ${err.message}\n`));
  if (!outcome) {
    process.stderr.write(`${(failure as Error)?.stack ?? String(failure)}\n`);
    report(name, false, { error: (failure as Error)?.message ?? String(failure) });
  }
  report(name, outcome.passed, outcome.details);
}

/** Prints the drill's result as one JSON document (for RELIABILITY.md) and exits 0 on pass, 1 on fail. */
function report(drill: string, passed: boolean, details: Record<string, unknown>): never {
  const result = {
    drill,
    verdict: passed ? 'PASS' : 'FAIL',
    date: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
    ...details,
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  process.exit(passed ? 0 : 1);
}

/** A line of progress on stderr, with the seconds since the drill began. */
export function progress(startedAt: number) {
  return (message: string) => process.stderr.write(`[${((Date.now() - startedAt) / 1000).toFixed(1)} s] ${message}\n`);
}
