import { parseSystems, report, startRun, type System, type SystemRun } from '../../bench/support/ceiling-report';
import type { PhaseReport } from '../../bench/support/phase-report';

// The ceiling benchmarks' report: the floor run as one system (`floor`) is set beside the service and the floor
// summed from separate runs. A wrong ratio here would be quoted in BENCHMARKS.md as a measurement.

const PHASE = { rate: 20, durationS: 15 };

function runOf(system: System, round: number, p50: number, cpuMsPerEvent: Record<string, number>): SystemRun {
  const phase: PhaseReport = {
    phase: 'open loop 20/s',
    offered: '20/s',
    sent: 300,
    delivered: 300,
    failedCalls: 0,
    ratePerS: 20,
    p50,
    p95: p50 * 2,
    p99: p50 * 3,
    max: p50 * 4,
    apiP50: 5,
    apiP95: 9,
    cores: Object.fromEntries(Object.entries(cpuMsPerEvent).map(([name, ms]) => [name, (ms * 20) / 1000])),
    cpuMsPerEvent: { ...cpuMsPerEvent, bench: 99 },
  };
  return { ...startRun(system, 'combined', round), phases: [phase] };
}

test('a floor run needs the service first, whose envelope it sends', () => {
  expect(() => parseSystems('floor,service')).toThrow('--systems must begin with service');
  expect(() => parseSystems('floor-outbox,service')).toThrow('--systems must begin with service');
  expect(parseSystems('service,platform,floor')).toEqual(['service', 'platform', 'floor']);
});

test('the floor run together is set beside the service and the floor summed from separate runs, medians of the rounds', () => {
  const runs = [
    runOf('service', 0, 60, { delivery: 30, temporal: 30, api: 12, postgres: 10 }),
    runOf('service', 1, 80, { delivery: 32, temporal: 30, api: 12, postgres: 10 }),
    runOf('service', 2, 70, { delivery: 40, temporal: 30, api: 12, postgres: 10 }),
    runOf('ceiling-view', 0, 20, { worker: 22, temporal: 28 }),
    runOf('platform', 0, 15, { api: 10, postgres: 6 }),
    runOf('floor', 0, 40, { worker: 22, temporal: 27, api: 10, postgres: 6 }),
  ];
  const text = report(runs, [{ name: 'combined', tuning: {}, relay: {}, layout: 'combined' }], {}, [PHASE]);
  // Service median 84 ms (82, 84, 92; the bench's own 99 not counted), floor 65, summed 50 + 16.
  expect(text).toContain(
    'Floor run together, open loop 20/s: CPU per event 65.0 ms; summed from separate runs (ceiling-view + platform calls) 66.0 ms; ' +
      'service ÷ floor run together = 1.29, p50 / p95 ms service 70 / 140, floor 40 / 80',
  );
});

test('the floor with the outbox and the attempt log is set beside the service, medians of its rounds', () => {
  const runs = [
    runOf('service', 0, 60, { delivery: 30, temporal: 30, api: 12, postgres: 10 }),
    runOf('floor-outbox', 0, 50, { worker: 26, temporal: 27, api: 11, postgres: 9 }),
    runOf('floor-outbox', 1, 40, { worker: 24, temporal: 27, api: 11, postgres: 9 }),
  ];
  const text = report(runs, [{ name: 'combined', tuning: {}, relay: {}, layout: 'combined' }], {}, [PHASE]);
  // Service 82 ms; the floor with the outbox 72 (73, 71).
  expect(text).toContain(
    'Floor with the outbox and the attempt log, open loop 20/s: CPU per event 72.0 ms; service ÷ floor with the outbox = 1.14, ' +
      'p50 / p95 ms service 60 / 120, floor with the outbox 45 / 90',
  );
});
