import { configureEndpoint, recordCheckouts } from './support/platform-load';
import { sleep } from './support/wait';
import { runDrill } from './support/report';
import { setUpDrill } from './support/stage';
import { verifyDeliveries, verifyPlatformWrites, waitUntilAllFinal } from './support/verify';
import { isRunning } from '../stack/process';

/*
 * Temporal is down (never started) while 500 events are committed through the platform API; the relay runs and
 * fails to start their workflows. Then Temporal and a worker start. Every event must be delivered exactly once
 * (nothing was in flight, so no duplicate is acceptable). `node dist/drills/temporal-down.js [events]`
 */
const EVENTS = Number(process.argv[2] ?? 500);
const TIME_LIMIT_MS = 5 * 60_000;

void runDrill('temporal-down', async (onCleanup) => {
  const { log, cluster, subscriber } = await setUpDrill('temporal-down', onCleanup, { subscriberDelayMs: 20 });

  await cluster.startApi();
  const relay = await cluster.startRelay();
  await configureEndpoint(cluster, subscriber.url);
  const load = await recordCheckouts(cluster, { count: EVENTS, concurrency: 10, prefix: 'down', deadlineMs: 120_000 });
  log(`${load.succeeded} checkouts committed with Temporal down`);
  await sleep(5_000);
  const startedWhileDown: number = (await cluster.db('webhook_events').whereNotNull('workflow_started_at').count({ n: '*' }))[0].n as number;
  const receivedWhileDown = subscriber.total();
  log(`after 5 s: ${startedWhileDown} workflows started, ${receivedWhileDown} requests received; starting Temporal`);

  await cluster.startTemporal();
  await cluster.startWorker();
  const allFinal = await waitUntilAllFinal(cluster.db, EVENTS, TIME_LIMIT_MS, (final) => log(`${final}/${EVENTS} final`));
  const verdict = await verifyDeliveries(cluster.db, subscriber);
  const writes = await verifyPlatformWrites(cluster.db, load.transactionIds);
  const passed =
    allFinal &&
    load.succeeded === EVENTS &&
    startedWhileDown === 0 &&
    receivedWhileDown === 0 &&
    writes.missingCheckouts.length === 0 &&
    writes.halfWritten.length === 0 &&
    writes.keptCountsOff.length === 0 &&
    verdict.committedEvents === EVENTS &&
    verdict.delivered === EVENTS &&
    verdict.attemptLogProblems.length === 0 &&
    verdict.deliveredButNotReceived.length === 0 &&
    verdict.receivedUnknown.length === 0 &&
    verdict.duplicateDeliveries === 0 &&
    isRunning(relay);
  return {
    passed,
    details: {
      events: EVENTS,
      startedWhileDown,
      receivedWhileDown,
      relayStillRunning: isRunning(relay),
      platformCalls: { succeeded: load.succeeded, failedTries: load.failedTries },
      ...writes,
      ...verdict,
      notFinal: verdict.notFinal.slice(0, 20),
      attemptLogProblems: verdict.attemptLogProblems.slice(0, 20),
    },
  };
});
