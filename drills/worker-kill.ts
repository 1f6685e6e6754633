import { recordCheckouts } from './support/platform-load';
import { sleep, waitFor } from './support/wait';
import { runDrill } from './support/report';
import { setUpDrill, startService } from './support/stage';
import { deliveriesConsistent, verifyDeliveries, waitUntilAllFinal } from './support/verify';

/*
 * kill -9 of the delivery worker while 1,000 deliveries are under way, then a new worker. Every committed event
 * must end delivered with a consistent attempt log. Duplicates are counted and bounded: only an event whose POST
 * reached the subscriber but whose attempt was not yet recorded when the worker died can be sent again (the
 * outcome died with the worker); every duplicate must be one of those. And the attempt log counts what the
 * subscriber saw: for every event, attempts logged (with an outcome, or interrupted) ≥ requests received.
 * `node dist/drills/worker-kill.js [events]`
 */
const EVENTS = Number(process.argv[2] ?? 1_000);
const SUBSCRIBER_DELAY_MS = 1_000;
const KILL_AFTER_RECEIVED = Math.floor(EVENTS * 0.3);
const TIME_LIMIT_MS = 8 * 60_000;

void runDrill('worker-kill', async (onCleanup) => {
  const stage = await setUpDrill('worker-kill', onCleanup, { subscriberDelayMs: SUBSCRIBER_DELAY_MS });
  const { log, cluster, subscriber } = stage;
  const { worker: firstWorker } = await startService(stage);
  log(`cluster up in ${cluster.dir}; recording ${EVENTS} checkouts`);

  const load = await recordCheckouts(cluster, { count: EVENTS, concurrency: 20, prefix: 'kill', deadlineMs: 120_000 });
  log(`${load.succeeded} checkouts committed; ${subscriber.total()} requests so far`);

  await waitFor(`${KILL_AFTER_RECEIVED} requests at the subscriber`, () => subscriber.total() >= KILL_AFTER_RECEIVED, 180_000);
  const openAtKill = subscriber.inFlight();
  const receivedAtKill = subscriber.total();
  await firstWorker.stop('SIGKILL');
  const [{ n: finalAtKill }] = await cluster.db('webhook_events').whereIn('status', ['delivered', 'max_retries_reached']).count({ n: '*' });
  log(`worker killed (kill -9): ${EVENTS - Number(finalAtKill)} deliveries under way, ${openAtKill} requests open at the subscriber, ${receivedAtKill} received`);
  // Requests already on the wire still arrive; after that nothing may arrive until the next worker runs.
  await sleep(SUBSCRIBER_DELAY_MS + 500);
  const receivedWhileDown = subscriber.total();
  const recorded = new Set((await cluster.db('webhook_delivery_attempts').distinct('event_id')).map((row: { event_id: number }) => row.event_id));
  const exposed = new Set([...subscriber.received.keys()].filter((id) => !recorded.has(id)));
  await sleep(3_000);
  const arrivedWithoutWorker = subscriber.total() - receivedWhileDown;
  await cluster.startWorker();
  log('second worker started');

  const allFinal = await waitUntilAllFinal(cluster.db, EVENTS, TIME_LIMIT_MS, (final) => log(`${final}/${EVENTS} final`));
  const verdict = await verifyDeliveries(cluster.db, subscriber);
  const duplicatedIds = [...subscriber.received].filter(([, n]) => n > 1).map(([id]) => id);
  const passed =
    allFinal &&
    load.succeeded === EVENTS &&
    verdict.committedEvents === EVENTS &&
    deliveriesConsistent(verdict) &&
    arrivedWithoutWorker === 0 &&
    duplicatedIds.every((id) => exposed.has(id)) &&
    verdict.attemptsBelowRequests.length === 0;
  return {
    passed,
    details: {
      events: EVENTS,
      subscriberDelayMs: SUBSCRIBER_DELAY_MS,
      deliveriesUnderWayAtKill: EVENTS - Number(finalAtKill),
      receivedAtKill,
      openAtKill,
      arrivedWithoutWorker,
      duplicateBound: exposed.size,
      duplicatesOutsideBound: duplicatedIds.filter((id) => !exposed.has(id)),
      platformCalls: { succeeded: load.succeeded, failedTries: load.failedTries },
      ...verdict,
      notFinal: verdict.notFinal.slice(0, 20),
      attemptLogProblems: verdict.attemptLogProblems.slice(0, 20),
      attemptsBelowRequests: verdict.attemptsBelowRequests.slice(0, 20),
    },
  };
});
