import { loadUnderWay } from './support/platform-load';
import { sleep } from './support/wait';
import { runDrill } from './support/report';
import { setUpDrill, startService } from './support/stage';
import { deliveriesConsistent, verifyDeliveries, waitUntilAllFinal } from './support/verify';
import { isRunning } from '../stack/process';

/*
 * kill -9 of the Temporal dev server (file-backed) in the middle of 1,000 deliveries, down for a few seconds, then
 * started again on the same database file. Worker and relay keep running (a worker process that gives up is
 * restarted, as its supervisor would, and counted). Every committed event must end delivered, with a consistent
 * attempt log; duplicates are counted. `node dist/drills/temporal-restart.js [events]`
 */
const EVENTS = Number(process.argv[2] ?? 1_000);
const SUBSCRIBER_DELAY_MS = 200;
const DOWN_MS = 5_000;
const TIME_LIMIT_MS = 8 * 60_000;

void runDrill('temporal-restart', async (onCleanup) => {
  const stage = await setUpDrill('temporal-restart', onCleanup, { subscriberDelayMs: SUBSCRIBER_DELAY_MS });
  const { log, cluster, subscriber } = stage;
  const service = await startService(stage);
  const { relay } = service;
  let { worker } = service;

  // Checkouts keep coming while Temporal goes down: the relay must hold them until it is back.
  const { loading, committed } = await loadUnderWay(
    cluster,
    subscriber,
    // About ten calls a second, so that events are committed before, during and after the restart.
    { count: EVENTS, concurrency: 2, pauseMs: 150, prefix: 'temporal', deadlineMs: 300_000 },
    { share: 1 / 2, what: 'half of the events committed and deliveries under way', timeoutMs: 180_000 },
  );
  const receivedAtKill = subscriber.total();
  const openAtKill = subscriber.inFlight();
  const committedAtKill = committed();
  await cluster.killTemporal();
  log(`Temporal killed (kill -9): ${committedAtKill} committed, ${receivedAtKill} received, ${openAtKill} open`);
  await sleep(DOWN_MS);
  await cluster.startTemporal();
  log('Temporal started again on the same database file');

  // A worker that gave up while Temporal was away is restarted, as docker or systemd would.
  let workerRestarts = 0;
  const supervise = setInterval(() => {
    if (!isRunning(worker)) {
      workerRestarts += 1;
      void cluster.startWorker().then((next) => (worker = next));
    }
  }, 1_000);
  onCleanup(async () => clearInterval(supervise));

  const load = await loading;
  log(`${load.succeeded} checkouts committed`);
  const allFinal = await waitUntilAllFinal(cluster.db, EVENTS, TIME_LIMIT_MS, (final) => log(`${final}/${EVENTS} final`));
  const verdict = await verifyDeliveries(cluster.db, subscriber);
  const passed =
    allFinal &&
    load.succeeded === EVENTS &&
    verdict.committedEvents === EVENTS &&
    deliveriesConsistent(verdict) &&
    committedAtKill < EVENTS &&
    isRunning(relay);
  return {
    passed,
    details: {
      events: EVENTS,
      downMs: DOWN_MS,
      committedAtKill,
      receivedAtKill,
      openAtKill,
      workerRestarts,
      relayStillRunning: isRunning(relay),
      platformCalls: { succeeded: load.succeeded, failedTries: load.failedTries },
      ...verdict,
      notFinal: verdict.notFinal.slice(0, 20),
      attemptLogProblems: verdict.attemptLogProblems.slice(0, 20),
    },
  };
});
