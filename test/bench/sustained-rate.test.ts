import type { PhaseReport } from '../../bench/support/phase-report';
import { untilCalm } from '../../bench/support/processes';
import { highestSustainedRate, SUSTAINED_P95_MS } from '../../bench/support/sustained-rate';
import { keyValues } from '../../stack/cli';

// The benchmark's search for the highest open-loop rate a system keeps up with (bench/ceiling.ts --sustained). Its
// probe here is a system that keeps up to a known capacity: the search must find that capacity, never report a rate
// it did not see kept up with, and stay within its number of probes.

/** A phase at `rate` of a system that keeps up to `capacity` events per second: beyond, latency runs away. */
const systemOf = (capacity: number, { losesEvents = false } = {}) => {
  const probed: number[] = [];
  const probe = async (rate: number): Promise<PhaseReport> => {
    probed.push(rate);
    const keepsUp = rate <= capacity;
    return {
      phase: `open loop ${rate}/s`,
      offered: `${rate}/s`,
      sent: rate * 10,
      delivered: losesEvents ? rate * 10 - 1 : rate * 10,
      failedCalls: 0,
      ratePerS: Math.min(rate, capacity),
      p50: keepsUp ? 50 : 5_000,
      p95: keepsUp ? SUSTAINED_P95_MS - 1 : 12_000,
      p99: 0,
      max: 0,
      apiP50: 0,
      apiP95: 0,
      cores: {},
      cpuMsPerEvent: {},
    };
  };
  return { probe, probed };
};

test('finds the capacity by bisection between the bounds, within the probes allowed', async () => {
  const { probe, probed } = systemOf(37);
  const found = await highestSustainedRate(probe, { low: 10, high: 80, probes: 10 });
  expect(found.rate).toBe(37);
  expect(probed.slice(0, 2)).toEqual([10, 80]);
  expect(found.probes.map(({ rate, sustained }) => [rate, sustained])).toEqual(probed.map((rate) => [rate, rate <= 37]));
  expect(probed.length).toBeLessThanOrEqual(10);
});

test('with few probes, answers the highest rate it saw kept up with, not more', async () => {
  const { probe, probed } = systemOf(37);
  const found = await highestSustainedRate(probe, { low: 10, high: 80, probes: 3 });
  expect(probed).toHaveLength(3);
  expect(found.rate).toBe(Math.max(...probed.filter((rate) => rate <= 37)));
});

test('answers the upper bound when it is kept up with, and 0 when not even the lower one is', async () => {
  expect((await highestSustainedRate(systemOf(500).probe, { low: 10, high: 80, probes: 6 })).rate).toBe(80);
  expect((await highestSustainedRate(systemOf(5).probe, { low: 10, high: 80, probes: 6 })).rate).toBe(0);
});

test('a phase that lost an event is not kept up with, whatever its latency', async () => {
  expect((await highestSustainedRate(systemOf(500, { losesEvents: true }).probe, { low: 10, high: 80, probes: 6 })).rate).toBe(0);
});

test('every probe waits for the system to calm down first, and records how long that took', async () => {
  const { probe } = systemOf(37);
  const order: string[] = [];
  let waits = 0;
  const found = await highestSustainedRate(
    async (rate) => {
      order.push(`probe ${rate}`);
      return probe(rate);
    },
    { low: 10, high: 80, probes: 3 },
    async () => {
      order.push('calm');
      return { waitedS: ++waits, calm: waits < 3 };
    },
  );
  expect(order).toEqual(['calm', 'probe 10', 'calm', 'probe 80', 'calm', 'probe 45']);
  expect(found.probes.map(({ calmAfterS, calm }) => [calmAfterS, calm])).toEqual([
    [1, true],
    [2, true],
    [3, false],
  ]);
});

describe('untilCalm', () => {
  /** A meter whose windows read these cores in turn: the system's, the bench's own and a thread's, which do not count. */
  const meterReading = (busy: number[]) => {
    let window = 0;
    return () => {
      const cores = busy[Math.min(window++, busy.length - 1)];
      return { used: () => ({ temporal: { seconds: 0, cores: cores / 2 }, delivery: { seconds: 0, cores: cores / 2 }, bench: { seconds: 0, cores: 5 }, 'delivery[busiest thread]': { seconds: 0, cores: 5 } }) };
    };
  };

  test('waits for the windows in a row below the threshold: a single quiet window between busy ones is not calm', async () => {
    const meter = meterReading([0.9, 0.1, 0.9, 0.1, 0.1, 0.9]);
    let windows = 0;
    const counted = () => {
      windows++;
      return meter();
    };
    expect(await untilCalm(counted, { cores: 0.2, windowS: 0, windows: 2, timeoutS: 60 })).toMatchObject({ calm: true });
    expect(windows).toBe(5);
  });

  test('gives up at its time limit and says it did', async () => {
    expect(await untilCalm(meterReading([0.9]), { cores: 0.2, windowS: 0, windows: 2, timeoutS: 0.05 })).toMatchObject({ calm: false });
  });
});

test('keyValues: benchmark environment as KEY=value pairs split on semicolons only', () => {
  expect(keyValues(' A=1; B=x=y,z ;;C=')).toEqual({ A: '1', B: 'x=y,z', C: '' });
  expect(keyValues('')).toEqual({});
});
