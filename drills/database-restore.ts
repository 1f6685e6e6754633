import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadUnderWay, recordCheckouts } from './support/platform-load';
import { runDrill } from './support/report';
import { setUpDrill, startService } from './support/stage';
import { verifyDeliveries, verifyPlatformWrites, waitUntilAllFinal } from './support/verify';
import { isRunning } from '../stack/process';

/*
 * The application's database is restored from an older backup while Temporal keeps running, as
 * docs/backups.md#restoring-the-applications-database tells operators to: a backup is taken under traffic (half of the
 * checkouts committed), the traffic goes on and is delivered, the services are stopped, the backup restored, the
 * `migrate` job run (it moves the event id sequence past the highest event id Temporal has seen by itself), the
 * services started, more traffic.
 * Every event of the restored database and every new one must end delivered with a consistent attempt log;
 * duplicates only for events the backup had (their delivery went on after it, and Postgres no longer knows); no new
 * event under an id the subscriber saw before (it would drop it as a repeat); no workflow id conflict.
 * `node dist/drills/database-restore.js [events before the restore]`
 */
const EVENTS = Number(process.argv[2] ?? 600);
const EVENTS_AFTER = Math.round(EVENTS / 3);
const TIME_LIMIT_MS = 10 * 60_000;

const countLines = async (file: string, text: string) => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line.includes(text)).length;

void runDrill('database-restore', async (onCleanup) => {
  const stage = await setUpDrill('database-restore', onCleanup, { subscriberDelayMs: 20 });
  const { log, cluster, subscriber } = stage;
  const { api, relay, worker } = await startService(stage);

  const { loading: before, committed } = await loadUnderWay(
    cluster,
    subscriber,
    { count: EVENTS, concurrency: 2, pauseMs: 100, prefix: 'before', deadlineMs: 300_000 },
    { share: 1 / 2, what: 'half of the checkouts committed and deliveries under way', timeoutMs: 180_000 },
  );
  await cluster.snapshotDatabase('backup');
  log(`backup taken with ${committed()} checkouts committed, ${subscriber.total()} requests received`);
  const loadBefore = await before;
  const deliveredBefore = await waitUntilAllFinal(cluster.db, EVENTS, TIME_LIMIT_MS, (final) => log(`${final}/${EVENTS} final before the restore`));
  const receivedBeforeRestore = new Set(subscriber.received.keys());
  const highestReceived = Math.max(...receivedBeforeRestore);

  await Promise.all([api.stop(), relay.stop(), worker.stop()]);
  await cluster.restoreDatabase('backup');
  const [backup] = await cluster.db('webhook_events').select(
    cluster.db.raw('count(*)::int AS events'),
    cluster.db.raw('coalesce(max(id), 0)::int AS "maxId"'),
    cluster.db.raw(`count(*) FILTER (WHERE status IN ('waiting', 'failed'))::int AS "notFinal"`),
    cluster.db.raw('count(*) FILTER (WHERE workflow_started_at IS NULL)::int AS unstarted'),
  );
  const inBackup = new Set((await cluster.db('webhook_events').select('id')).map((row: { id: number }) => row.id));
  log(`restored: ${backup.events} events (up to id ${backup.maxId}), ${backup.notFinal} not final, ${backup.unstarted} not started`);

  // docs/backups.md#restoring-the-applications-database: the services start after the migrate job, which moves the event ids past Temporal's.
  const migrate = await cluster.startRole('migrate', { env: { LOG_LEVEL: 'info' } });
  const migrateExit = await migrate.exited();
  const advanced = (await readFile(path.join(cluster.dir, 'migrate.log'), 'utf8')).split('\n').find((line) => line.includes('event ids'));
  const sequenceAfter = Number((await cluster.db.raw(`SELECT last_value FROM webhook_events_id_seq`)).rows[0].last_value);
  log(`migrate exited ${migrateExit}: ${advanced ?? 'no event id line'}; sequence at ${sequenceAfter} (highest id received by the subscriber: ${highestReceived})`);

  const restarted = { api: await cluster.startApi(), relay: await cluster.startRelay(), worker: await cluster.startWorker() };
  const loadAfter = await recordCheckouts(cluster, { count: EVENTS_AFTER, concurrency: 2, pauseMs: 50, prefix: 'after', deadlineMs: 300_000 });
  const expected = backup.events + EVENTS_AFTER;
  const allFinal = await waitUntilAllFinal(cluster.db, expected, TIME_LIMIT_MS, (final) => log(`${final}/${expected} final after the restore`));

  const verdict = await verifyDeliveries(cluster.db, subscriber);
  const writes = await verifyPlatformWrites(cluster.db, loadAfter.transactionIds);
  const newIds: number[] = (await cluster.db('webhook_events').where('id', '>', backup.maxId).select('id')).map((row: { id: number }) => row.id);
  const reusedIds = newIds.filter((id) => receivedBeforeRestore.has(id));
  // Events created after the backup and delivered before the restore: gone with the restore, with their checkouts.
  const lostWithRestore = verdict.receivedUnknown;
  const unexpectedUnknown = lostWithRestore.filter((id) => !receivedBeforeRestore.has(id));
  const duplicatesOutsideBackup = [...subscriber.received].filter(([id, count]) => count > 1 && !inBackup.has(id)).map(([id]) => id);
  const relayLog = path.join(cluster.dir, 'relay.log');
  const conflicts = await countLines(relayLog, 'belongs to another event');
  const healed = await countLines(relayLog, 'delivery healed');
  const passed =
    deliveredBefore &&
    allFinal &&
    loadBefore.succeeded === EVENTS &&
    loadAfter.succeeded === EVENTS_AFTER &&
    verdict.committedEvents === expected &&
    verdict.notFinal.length === 0 &&
    verdict.attemptLogProblems.length === 0 &&
    verdict.deliveredButNotReceived.length === 0 &&
    newIds.length === EVENTS_AFTER &&
    reusedIds.length === 0 &&
    unexpectedUnknown.length === 0 &&
    duplicatesOutsideBackup.length === 0 &&
    writes.missingCheckouts.length === 0 &&
    writes.halfWritten.length === 0 &&
    conflicts === 0 &&
    migrateExit === 0 &&
    sequenceAfter >= highestReceived &&
    isRunning(restarted.relay);
  return {
    passed,
    details: {
      eventsBefore: EVENTS,
      eventsAfter: EVENTS_AFTER,
      backup,
      highestReceivedBeforeRestore: highestReceived,
      migrateExit,
      sequenceAfterMigrate: sequenceAfter,
      lostWithRestore: lostWithRestore.length,
      unexpectedUnknown,
      newEventIdsReused: reusedIds,
      duplicatesOutsideBackup,
      healedBySweep: healed,
      workflowIdConflicts: conflicts,
      platformCalls: {
        before: { succeeded: loadBefore.succeeded, failedTries: loadBefore.failedTries },
        after: { succeeded: loadAfter.succeeded, failedTries: loadAfter.failedTries },
      },
      ...writes,
      ...verdict,
      receivedUnknown: undefined,
      notFinal: verdict.notFinal.slice(0, 20),
      attemptLogProblems: verdict.attemptLogProblems.slice(0, 20),
    },
  };
});
