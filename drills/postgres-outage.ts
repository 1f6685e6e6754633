import { loadUnderWay } from './support/platform-load';
import { sleep } from './support/wait';
import { runDrill } from './support/report';
import { setUpDrill, startService } from './support/stage';
import { deliveriesConsistent, verifyDeliveries, verifyPlatformWrites, waitUntilAllFinal } from './support/verify';
import { isRunning } from '../stack/process';

/*
 * Postgres stops (fast shutdown: every session is cut) while platform calls are being made and their events
 * delivered, stays down for 10 s, and starts again. Callers retry with the same transaction id, as the platform
 * API asks. Afterwards every call must have written all its rows or none (then the retry wrote them), every event
 * be delivered with a consistent attempt log, and the duplicates be counted (none expected: the POST and its
 * recording are separate activities). `node dist/drills/postgres-outage.js [calls]`
 */
const CALLS = Number(process.argv[2] ?? 600);
const DOWN_MS = 10_000;
const TIME_LIMIT_MS = 6 * 60_000;

void runDrill('postgres-outage', async (onCleanup) => {
  const stage = await setUpDrill('postgres-outage', onCleanup, { subscriberDelayMs: 100 });
  const { log, cluster, subscriber } = stage;
  const { relay, worker } = await startService(stage);

  const { loading, committed } = await loadUnderWay(
    cluster,
    subscriber,
    // About 20 calls a second: the load goes on through the whole outage.
    { count: CALLS, concurrency: 4, pauseMs: 150, prefix: 'pg', deadlineMs: 240_000 },
    { share: 1 / 3, what: 'a third of the calls and the first deliveries', timeoutMs: 120_000 },
  );
  const committedAtStop = committed();
  const receivedAtStop = subscriber.total();
  await cluster.stopPostgres();
  log(`Postgres stopped: ${committedAtStop} calls committed, ${receivedAtStop} deliveries received`);
  await sleep(DOWN_MS);
  const committedWhileDown = committed() - committedAtStop;
  await cluster.startPostgres();
  log(`Postgres started again after ${DOWN_MS / 1000} s`);

  const load = await loading;
  log(`${load.succeeded} calls succeeded; failed tries: ${JSON.stringify(load.failedTries)}`);
  const allFinal = await waitUntilAllFinal(cluster.db, CALLS, TIME_LIMIT_MS, (final) => log(`${final}/${CALLS} final`));
  const verdict = await verifyDeliveries(cluster.db, subscriber);
  const writes = await verifyPlatformWrites(cluster.db, load.transactionIds);
  const passed =
    allFinal &&
    load.succeeded === CALLS &&
    committedWhileDown === 0 &&
    committedAtStop < CALLS &&
    writes.missingCheckouts.length === 0 &&
    writes.halfWritten.length === 0 &&
    writes.keptCountsOff.length === 0 &&
    verdict.committedEvents === CALLS &&
    deliveriesConsistent(verdict) &&
    isRunning(relay) &&
    isRunning(worker);
  return {
    passed,
    details: {
      calls: CALLS,
      downMs: DOWN_MS,
      committedAtStop,
      committedWhileDown,
      receivedAtStop,
      relayStillRunning: isRunning(relay),
      workerStillRunning: isRunning(worker),
      platformCalls: { succeeded: load.succeeded, failedTries: load.failedTries },
      ...writes,
      ...verdict,
      notFinal: verdict.notFinal.slice(0, 20),
      attemptLogProblems: verdict.attemptLogProblems.slice(0, 20),
    },
  };
});
