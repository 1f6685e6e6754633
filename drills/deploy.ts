import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import os from 'node:os';
import { DefaultLogger, makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import { configureEndpoint, recordCheckouts } from './support/platform-load';
import type { ChildProcessEntry } from '../stack/child-process';
import { isRunning } from '../stack/process';
import { sleep, waitFor } from './support/wait';
import { buildDrillRelease } from './support/release';
import { WATCH_INTERVAL_MS } from '../src/temporal/worker-deployment';
import { runDrill } from './support/report';
import { setUpDrill } from './support/stage';
import { verifyDeliveries, waitUntilAllFinal } from './support/verify';

/*
 * A deploy of release B beside release A, where B's deliverEvent cannot replay A's histories (one more local
 * activity before the first attempt), as docs/deploying.md does it: A runs (`delivery`
 * role) with events in backoff and in flight; B starts beside it and is made current with the Temporal CLI; A's
 * deliveries finish on A at their scheduled times while B's new events run on B; A drains (`temporal worker
 * deployment describe-version`) and is stopped. Both releases are drill builds of dist/ with the retry schedule
 * divided by 60 (5 s, 15 s, 60 s, …) so that the backoffs pass in seconds; the subscriber fails each event's first
 * three requests. `unversioned`: the same without Worker Versioning (TEMPORAL_WORKER_VERSIONING=false), deployed as
 * before it (B replaces A): it must show the failure test/temporal/replay.test.ts predicts, A's sleeping deliveries
 * stuck with a non-determinism error on B. `node dist/drills/deploy.js [versioned|unversioned] [events per release]`
 */
const MODE = process.argv[2] === 'unversioned' ? 'unversioned' : 'versioned';
const EVENTS = Number(process.argv[3] ?? 100);
const SCHEDULE_DIVISOR = 60;
const FAILURES_PER_EVENT = 3;
/** The backoffs the events go through, after each failed attempt (the schedule, divided): 5 s, 15 s, 60 s. */
const BACKOFFS_MS = [5 * 60_000, 15 * 60_000, 60 * 60_000].map((ms) => ms / SCHEDULE_DIVISOR);
const SUBSCRIBER_DELAY_MS = 500;
/**
 * How late an attempt may start after its backoff and still count as on time: a delivery stuck on a release that
 * cannot run it never starts; on a machine shared with other work a due attempt has started up to 40 s late.
 */
const ON_TIME_MS = 60_000;
const DEPLOYMENT = 'webhook-delivery';
const TIME_LIMIT_MS = 5 * 60_000;
const { EventType, WorkflowTaskFailedCause } = temporal.api.enums.v1;

/** Drill-only dynamic configuration: Temporal re-checks whether a version drained every 2 s, not every 3 minutes. */
const DRAINAGE_KNOBS = ['matching.wv.VersionDrainageStatusVisibilityGracePeriod="5s"', 'matching.wv.VersionDrainageStatusRefreshInterval="2s"'];

// The replays below (B's code on A's history) make the SDK's core log warnings: to stderr, as the drill's progress,
// never into the JSON verdict on stdout.
Runtime.install({
  logger: new DefaultLogger('WARN'),
  telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }), forward: {} } },
});

void runDrill(`deploy-${MODE}`, async (onCleanup) => {
  const stage = await setUpDrill(`deploy-${MODE}`, onCleanup, {
    subscriberDelayMs: SUBSCRIBER_DELAY_MS,
    failuresPerEvent: FAILURES_PER_EVENT,
    temporalDynamicConfig: DRAINAGE_KNOBS,
  });
  const { log, cluster, subscriber } = stage;
  const { address } = cluster.temporal;
  const cli = (...args: string[]) => cluster.temporalCli(args);
  const releaseA = await buildDrillRelease(cluster.dir, 'a', { scheduleDivisor: SCHEDULE_DIVISOR });
  const releaseB = await buildDrillRelease(cluster.dir, 'b', { scheduleDivisor: SCHEDULE_DIVISOR, extraStepBeforeFirstAttempt: true });
  await cluster.startTemporal();
  await cluster.startApi();
  const connection = await Connection.connect({ address });
  onCleanup(() => connection.close());
  const client = new Client({ connection });

  const start = (release: typeof releaseA, buildId: string): Promise<ChildProcessEntry> =>
    release.startRole(cluster, 'delivery', `delivery-${release.name}`, { BUILD_ID: buildId, TEMPORAL_WORKER_VERSIONING: String(MODE === 'versioned') });
  const currentBuildId = async () =>
    (await client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: DEPLOYMENT })).workerDeploymentInfo?.routingConfig
      ?.currentDeploymentVersion?.buildId;

  // Release A, with events in backoff and in flight.
  const deliveryA = await start(releaseA, 'drill-a');
  await configureEndpoint(cluster, subscriber.url);
  if (MODE === 'versioned') {
    await waitFor('release A to be current (the deployment’s first version)', async () => (await currentBuildId()) === 'drill-a', 60_000);
  }
  const loadA = await recordCheckouts(cluster, { count: EVENTS, concurrency: 10, prefix: 'release-a', deadlineMs: 120_000 });
  const lastEventOfA = Number((await cluster.db('webhook_events').max({ id: 'id' }))[0].id);
  await waitFor('every event of A to have made its first attempt', async () => {
    const [{ n }] = await cluster.db('webhook_events').where('attempts', 0).count({ n: '*' });
    return Number(n) === 0;
  }, 120_000);
  // The switch comes while later attempts are on the wire, if the machine lets it catch one (the subscriber answers
  // after half a second).
  await waitFor('requests in flight', () => subscriber.inFlight() > 0, 30_000).catch(() => undefined);
  const atSwitch = {
    inBackoff: Number((await cluster.db('webhook_events').where({ status: 'failed' }).count({ n: '*' }))[0].n),
    requestsInFlight: subscriber.inFlight(),
    delivered: Number((await cluster.db('webhook_events').where({ status: 'delivered' }).count({ n: '*' }))[0].n),
  };
  log(`release A: ${loadA.succeeded} events, ${atSwitch.inBackoff} in backoff, ${atSwitch.requestsInFlight} requests in flight`);

  // Release B beside A, made current; or, without versioning, B in place of A.
  const deliveryB = await start(releaseB, 'drill-b');
  let switchedAt: number;
  if (MODE === 'versioned') {
    await waitFor('release B to poll (its version registered)', async () => {
      await cli('worker', 'deployment', 'describe-version', '--deployment-name', DEPLOYMENT, '--build-id', 'drill-b');
      return true;
    }, 60_000);
    await cli('worker', 'deployment', 'set-current-version', '--deployment-name', DEPLOYMENT, '--build-id', 'drill-b', '--yes');
    switchedAt = Date.now();
    log('release B is current (temporal worker deployment set-current-version)');
  } else {
    await sleep(3_000);
    await deliveryA.stop();
    switchedAt = Date.now();
    log('release B started, release A stopped (a deploy without versioning)');
  }
  // Half of B's load at once, where A's relay, which leads, may start events eagerly on A before it sees B current; the
  // other half once A has looked (every 2 s) and stood back from the lead, which B's relay then holds: those run on B.
  const firstHalfOfB = await recordCheckouts(cluster, { count: Math.ceil(EVENTS / 2), concurrency: 10, prefix: 'release-b', deadlineMs: 120_000 });
  if (MODE === 'versioned') await sleep(Math.max(0, switchedAt + WATCH_INTERVAL_MS + 2_000 - Date.now()));
  const lastEventOfFirstHalf = Number((await cluster.db('webhook_events').max({ id: 'id' }))[0].id);
  const secondHalfOfB = await recordCheckouts(cluster, { count: Math.floor(EVENTS / 2), concurrency: 10, prefix: 'release-b-later', deadlineMs: 120_000 });
  const loadB = { succeeded: firstHalfOfB.succeeded + secondHalfOfB.succeeded };
  log(`release B: ${loadB.succeeded} events`);

  const finalOfB = async () =>
    Number((await cluster.db('webhook_events').where('id', '>', lastEventOfA).whereIn('status', ['delivered', 'max_retries_reached']).count({ n: '*' }))[0].n);
  // Without versioning A's deliveries never end: once B's have (A's backoffs are over by then), the outcome is known.
  const allFinal =
    MODE === 'versioned'
      ? await waitUntilAllFinal(cluster.db, 2 * EVENTS, TIME_LIMIT_MS, (final) => log(`${final}/${2 * EVENTS} final`))
      : await waitFor('release B’s events to end', async () => (await finalOfB()) === EVENTS, TIME_LIMIT_MS).then(() => false);

  // A drains: every workflow pinned to it has closed. Then it is stopped.
  let drainage: { drainedAfterSwitchMs?: number; describeVersion?: string } = {};
  if (MODE === 'versioned') {
    const drained = async () => /DrainageStatus\s+drained/.test(await cli('worker', 'deployment', 'describe-version', '--deployment-name', DEPLOYMENT, '--build-id', 'drill-a'));
    await waitFor('release A to drain', drained, 120_000).catch(() => undefined);
    const describeVersion = await cli('worker', 'deployment', 'describe-version', '--deployment-name', DEPLOYMENT, '--build-id', 'drill-a');
    drainage = { drainedAfterSwitchMs: (await drained()) ? Date.now() - switchedAt : undefined, describeVersion };
    log(`release A drained ${drainage.drainedAfterSwitchMs} ms after the switch; stopping it`);
    await deliveryA.stop();
  }

  // What ran where, and whether any workflow task failed for non-determinism.
  const events: Array<{ id: number; workflow_id: string }> = await cluster.db('webhook_events').select('id', 'workflow_id').orderBy('id');
  const byVersion: Record<string, number[]> = {};
  const nonDeterministic: number[] = [];
  const retryingTask: number[] = [];
  /** Events of B's load that started on A: eagerly by A's relay before it saw B current, or routed before the switch reached matching. */
  const lateStartsOnA: Array<{ eager: boolean; afterSwitchMs: number }> = [];
  /** Events of B's second half that ran on A, or started without eager start: none may, once B's relay leads. */
  const secondHalfOnA: number[] = [];
  const secondHalfNotEager: number[] = [];
  let firstHistoryOfA: temporal.api.history.v1.IHistory | undefined;
  for (const { id, workflow_id } of events) {
    const handle = client.workflow.getHandle(workflow_id);
    const description = await handle.describe();
    const release = `${id <= lastEventOfA ? 'A' : 'B'} event on ${description.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? 'unversioned'}`;
    (byVersion[release] ??= []).push(id);
    const history = await handle.fetchHistory();
    const [started] = history.events ?? [];
    if (id > lastEventOfFirstHalf && !started?.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted) secondHalfNotEager.push(id);
    if (release === 'B event on drill-a') {
      if (id > lastEventOfFirstHalf) secondHalfOnA.push(id);
      lateStartsOnA.push({
        eager: started?.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted ?? false,
        afterSwitchMs: Number(started?.eventTime?.seconds ?? 0) * 1000 + Math.round((started?.eventTime?.nanos ?? 0) / 1e6) - switchedAt,
      });
    }
    const failed = history.events?.some(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED &&
        event.workflowTaskFailedEventAttributes?.cause === WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
    );
    if (failed) nonDeterministic.push(id);
    // Temporal records a workflow task's first failure only; one that timed out first (on a worker that stopped) and
    // then failed on B is retried without a trace in history, but its pending task counts the attempts.
    if ((description.raw.pendingWorkflowTask?.attempt ?? 0) > 1) retryingTask.push(id);
    if (id <= lastEventOfA && description.status.name === 'COMPLETED') firstHistoryOfA ??= history;
  }

  // B cannot replay A's histories: the guard is what kept A's deliveries on A.
  let bReplaysA = 'no completed history of A to replay';
  if (firstHistoryOfA) {
    const replayOn = (codePath: string) =>
      Worker.runReplayHistory({ workflowBundle: { codePath } }, firstHistoryOfA).then(
        () => 'replays',
        (err: Error) => `fails: ${err.name}`,
      );
    bReplaysA = `A's history on A's code ${await replayOn(releaseA.workflowBundlePath)}; on B's code ${await replayOn(releaseB.workflowBundlePath)}`;
  }

  // On time: each attempt after a backoff started when its pause after the previous attempt's outcome was over.
  const attempts: Array<{ event_id: number; number: number; started_at: Date; duration_ms: number }> = await cluster.db('webhook_delivery_attempts')
    .select('event_id', 'number', 'started_at', 'duration_ms')
    .orderBy(['event_id', 'number']);
  const lateness: Record<'A' | 'B', number[]> = { A: [], B: [] };
  for (const [index, attempt] of attempts.entries()) {
    const previous = attempts[index - 1];
    if (!previous || previous.event_id !== attempt.event_id) continue;
    const late = attempt.started_at.getTime() - (previous.started_at.getTime() + previous.duration_ms) - BACKOFFS_MS[previous.number - 1];
    lateness[attempt.event_id <= lastEventOfA ? 'A' : 'B'].push(late);
  }
  const spread = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    return { attempts: sorted.length, earliestMs: sorted[0], medianMs: at(0.5), p95Ms: at(0.95), latestMs: sorted.at(-1), late: sorted.filter((ms) => ms >= ON_TIME_MS).length };
  };
  const onTime = { A: spread(lateness.A), B: spread(lateness.B) };
  const earliestMs = Math.min(...lateness.A, ...lateness.B);
  const latestMs = Math.max(...lateness.A, ...lateness.B);

  const verdict = await verifyDeliveries(cluster.db, subscriber);
  const extraRequests = [...subscriber.received.values()].reduce((sum, n) => sum + Math.max(0, n - FAILURES_PER_EVENT - 1), 0);
  const aEvents = events.filter(({ id }) => id <= lastEventOfA).map(({ id }) => id);
  const stuckOfA = verdict.notFinal.filter((id) => id <= lastEventOfA);
  const bDelivered = events.filter(({ id }) => id > lastEventOfA).length - verdict.notFinal.filter((id) => id > lastEventOfA).length;
  const versionedPassed =
    allFinal &&
    verdict.committedEvents === 2 * EVENTS &&
    verdict.notFinal.length === 0 &&
    verdict.attemptLogProblems.length === 0 &&
    verdict.deliveredButNotReceived.length === 0 &&
    nonDeterministic.length === 0 &&
    (byVersion['A event on drill-a'] ?? []).length === aEvents.length &&
    (byVersion['B event on drill-b'] ?? []).length > 0 &&
    secondHalfOnA.length === 0 &&
    secondHalfNotEager.length === 0 &&
    drainage.drainedAfterSwitchMs !== undefined &&
    earliestMs > -100 &&
    latestMs < ON_TIME_MS &&
    bReplaysA.includes("on A's code replays") &&
    bReplaysA.includes("on B's code fails") &&
    extraRequests === 0;
  // Without versioning the drill passes when it shows what the replay test predicts.
  const failureShown =
    nonDeterministic.length > 0 &&
    stuckOfA.length > 0 &&
    stuckOfA.every((id) => nonDeterministic.includes(id) || retryingTask.includes(id)) &&
    bDelivered === EVENTS;
  return {
    passed: MODE === 'versioned' ? versionedPassed : failureShown,
    details: {
      mode: MODE,
      loadAverage: os.loadavg().map((load) => Number(load.toFixed(1))),
      expectation: MODE === 'versioned' ? 'every delivery ends, each on the release it started on' : 'A’s sleeping deliveries stuck on B with a non-determinism error',
      eventsPerRelease: EVENTS,
      scheduleDividedBy: SCHEDULE_DIVISOR,
      atSwitch,
      workflowsBy: Object.fromEntries(Object.entries(byVersion).map(([key, ids]) => [key, ids.length])),
      startedOnAAfterTheSwitch: {
        eager: lateStartsOnA.filter((start) => start.eager).length,
        notEager: lateStartsOnA.filter((start) => !start.eager).length,
        latestAfterSwitchMs: Math.max(0, ...lateStartsOnA.map((start) => start.afterSwitchMs)),
        ofTheSecondHalf: secondHalfOnA.length,
      },
      secondHalfOfBStartedNotEager: secondHalfNotEager.length,
      nonDeterminismFailures: nonDeterministic.length,
      workflowTasksFailingAgainAndAgain: retryingTask.length,
      stuckEventsOfA: stuckOfA.length,
      deliveredEventsOfB: bDelivered,
      attemptsAfterBackoff: onTime,
      replay: bReplaysA,
      drainage,
      extraRequests,
      ...verdict,
      notFinal: verdict.notFinal.slice(0, 20),
      attemptLogProblems: verdict.attemptLogProblems.slice(0, 20),
      duplicateDeliveries: undefined,
      eventsDeliveredMoreThanOnce: undefined,
      deliveryProcesses: { a: isRunning(deliveryA), b: isRunning(deliveryB) },
    },
  };
});
