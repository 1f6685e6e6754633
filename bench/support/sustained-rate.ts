import type { PhaseReport } from './phase-report';

/** What counts as keeping up with an open loop: every event delivered, and the 95th percentile under this. */
export const SUSTAINED_P95_MS = 1_000;

export interface SustainedRate {
  /** The highest rate probed that the system kept up with (0: not even the lowest). */
  rate: number;
  /**
   * Every probe, in the order run, with the seconds waited before it for the system to calm down and whether it did
   * (false: the wait's time limit ran out).
   */
  probes: Array<{ rate: number; delivered: number; sent: number; p95: number; sustained: boolean; calmAfterS: number; calm: boolean }>;
}

const keptUp = (report: PhaseReport) => report.failedCalls === 0 && report.delivered === report.sent && report.p95 < SUSTAINED_P95_MS;

/**
 * The highest open-loop rate between `low` and `high` (events per second) that a system sustains, found by bisection
 * in `probes` phases at most: `probe(rate)` runs one open-loop phase at that rate (each system the same duration and
 * settle). A rate is sustained when every event arrived with p95 under SUSTAINED_P95_MS; whole events per second.
 * Before each probe, `calm()` waits until the system has worked off what the phase before it left (a probe after
 * an overloaded one would otherwise start behind), answering how long it waited and whether the system did calm down.
 */
export async function highestSustainedRate(
  probe: (rate: number) => Promise<PhaseReport>,
  { low, high, probes }: { low: number; high: number; probes: number },
  calm: () => Promise<{ waitedS: number; calm: boolean }> = async () => ({ waitedS: 0, calm: true }),
): Promise<SustainedRate> {
  const result: SustainedRate = { rate: 0, probes: [] };
  const tryRate = async (rate: number) => {
    const { waitedS: calmAfterS, calm: calmed } = await calm();
    const report = await probe(rate);
    const sustained = keptUp(report);
    result.probes.push({ rate, delivered: report.delivered, sent: report.sent, p95: report.p95, sustained, calmAfterS, calm: calmed });
    return sustained;
  };
  if (!(await tryRate(low))) return result;
  result.rate = low;
  let failing = high;
  if (await tryRate(high)) return { ...result, rate: high };
  while (result.probes.length < probes && failing - result.rate > 1) {
    const middle = Math.round((result.rate + failing) / 2);
    if (await tryRate(middle)) result.rate = middle;
    else failing = middle;
  }
  return result;
}
