import os from 'node:os';
import { flags } from '../stack/cli';
import { durationMs } from '../stack/compose-file';
import type { RunningStack } from '../stack/stack';
import { type LoadResult, recordCheckouts } from './support/platform-load';
import { sleep, waitFor } from './support/wait';
import { type DrillOutcome, runDrill } from './support/report';
import {
  deliveredByReplica,
  relayLeadByReplica,
  duplicateVerdict,
  type Exposure,
  setUpStackDrill,
  type StackStage,
  stackDrillFlags,
  withExposure,
} from './support/stack-stage';
import { deliveriesConsistent, verifyDeliveries, verifyPlatformWrites, waitUntilAllFinal } from './support/verify';

/*
 * Fault drills on the production-like stack of `npm run stack` (two API and two delivery replicas behind Caddy,
 * Temporal as four services on Postgres with mTLS), each under a steady load of platform calls through Caddy:
 *
 *   node dist/drills/stack.js <drill> [--events=N] [--base-port=P --membership-base-port=M] [--keep-logs]
 *
 * delivery-kill     kill -9 of the delivery replica whose relay leads, which stays dead: the other takes over the
 *                   lead, its claims and its workflows
 * temporal-restart  the Temporal history service restarted, later the whole Temporal cluster (all four services)
 * postgres-restart  Postgres, under both the application and Temporal, stopped (fast: sessions cut), down 10 s
 * rolling-restart   every application replica restarted one by one (SIGTERM, its grace period, started again);
 *                   the API errors the callers saw meanwhile are counted
 *
 * Each then checks (drills/support/verify.ts) that every committed event ended delivered with a consistent attempt
 * log, every platform call wrote all its rows, every duplicate delivery was exposed at a fault (its POST had
 * arrived, its attempt was not recorded), and every event's attempt log (interrupted attempts included) has at least
 * as many rows as the subscriber received requests for it.
 */

// The verdict is the only output on stdout; libraries' warnings (knex's while Postgres is down) go with the progress.
console.log = (...args: unknown[]) => process.stderr.write(`${args.join(' ')}\n`);

const DRILL = process.argv[2] ?? '';
const options = flags({ events: 0, ...stackDrillFlags }, process.argv.slice(3));

interface Load {
  committed: () => number;
  done: Promise<LoadResult>;
}

/** Checkouts through Caddy at a steady pace (4 callers, 100 ms between calls), each retried until it succeeds. */
function startLoad({ api }: StackStage, count: number, prefix: string, onFailedTry?: (outcome: string) => void): Load {
  let committed = 0;
  const done = recordCheckouts(api, {
    count,
    concurrency: 4,
    pauseMs: 100,
    prefix,
    deadlineMs: 10 * 60_000,
    onProgress: (n) => (committed = n),
    onFailedTry,
  });
  return { committed: () => committed, done };
}

/** Seconds from now until the subscriber has received `more` requests beyond those it has now. */
async function secondsUntilDeliveriesGoOn({ subscriber }: StackStage, more = 10, timeoutMs = 180_000): Promise<number> {
  const started = Date.now();
  const from = subscriber.total();
  await waitFor(`${more} more deliveries`, () => subscriber.total() >= from + more, timeoutMs);
  return (Date.now() - started) / 1000;
}

/**
 * Restarts a process of the stack that ended by itself while the drill runs, as Compose's `restart: unless-stopped`
 * would, and counts it; it watches `names` only, never a process the drill stops on purpose.
 */
function supervise(stack: RunningStack, names: string[], log: (message: string) => void) {
  const restarts: Record<string, number> = {};
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    const running = stack.processes();
    const ended = names.filter((name) => !running.has(name));
    if (ended.length === 0) return;
    busy = true;
    void (async () => {
      for (const name of ended) {
        restarts[name] = (restarts[name] ?? 0) + 1;
        log(`${name} ended by itself: restarting it, as Compose would`);
        await stack.startProcess(name).catch((err: Error) => log(`restarting ${name} failed: ${err.message}`));
      }
    })().finally(() => (busy = false));
  }, 1_000);
  return { restarts, stop: () => clearInterval(timer) };
}

const applicationReplicas = (stack: RunningStack) => [...stack.topology.delivery, ...stack.topology.api].map(({ name }) => name);
const temporalServices = (stack: RunningStack) => stack.topology.temporal.map(({ name }) => name);

/** The verdict every drill shares, and the figures it reports. */
async function verdict(stage: StackStage, load: LoadResult, events: number, exposures: Exposure[], timeLimitMs: number) {
  const { db, subscriber, log } = stage;
  const allFinal = await waitUntilAllFinal(db, events, timeLimitMs, (final) => log(`${final}/${events} final`));
  const deliveries = await verifyDeliveries(db, subscriber);
  const writes = await verifyPlatformWrites(db, load.transactionIds);
  const duplicates = duplicateVerdict(subscriber, exposures);
  const passed =
    allFinal &&
    load.succeeded === events &&
    deliveries.committedEvents === events &&
    deliveries.delivered === events &&
    deliveriesConsistent(deliveries) &&
    deliveries.attemptsBelowRequests.length === 0 &&
    writes.missingCheckouts.length === 0 &&
    writes.halfWritten.length === 0 &&
    writes.keptCountsOff.length === 0 &&
    duplicates.withinBound;
  return {
    passed,
    details: {
      events,
      loadAverage1m: os.loadavg()[0],
      platformCalls: { succeeded: load.succeeded, failedTries: load.failedTries },
      ...writes,
      ...deliveries,
      ...duplicates,
      notFinal: deliveries.notFinal.slice(0, 20),
      attemptLogProblems: deliveries.attemptLogProblems.slice(0, 20),
      attemptsBelowRequests: deliveries.attemptsBelowRequests.slice(0, 20),
    },
  };
}

/** The workflows open at `at`, and which worker (identity `pid@host`) began and which completed each. */
async function workflowsOpenAt({ temporal }: StackStage, at: Date) {
  const query = `WorkflowType = 'deliverEvent' AND StartTime < '${at.toISOString()}' AND (ExecutionStatus = 'Running' OR CloseTime > '${at.toISOString()}')`;
  const workers: Array<{ began?: string; completed?: string }> = [];
  for await (const execution of temporal.workflow.list({ query })) {
    const events = (await temporal.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory()).events ?? [];
    const startedBy = events.map((event) => event.workflowTaskStartedEventAttributes?.identity).filter(Boolean) as string[];
    const completedBy = events.map((event) => event.workflowTaskCompletedEventAttributes?.identity).filter(Boolean) as string[];
    workers.push({ began: startedBy[0], completed: completedBy.at(-1) });
  }
  return workers;
}

/** kill -9 of the leading delivery replica with attempts open; it stays dead, so the other must lead and finish everything. */
async function deliveryKill(stage: StackStage): Promise<DrillOutcome> {
  const { stack, db, subscriber, log } = stage;
  const events = options.events || 800;
  const load = startLoad(stage, events, 'kill');
  await waitFor('a third of the calls and 50 deliveries', () => load.committed() >= events / 3 && subscriber.total() >= 50, 300_000);
  const leadAtStart = await relayLeadByReplica(stack);
  const victim = Object.keys(leadAtStart).find((name) => leadAtStart[name] === 1) ?? stack.topology.delivery[0].name;
  const victimIdentity = `${stack.processes().get(victim)}@${os.hostname()}`;
  let killedAt = new Date();
  let committedAtKill = 0;
  const exposure = await withExposure(db, subscriber, SUBSCRIBER_DELAY_MS[DRILL] + 500, () => {
    killedAt = new Date();
    committedAtKill = load.committed();
    return stack.stopProcess(victim, 'SIGKILL');
  });
  const successor = stack.topology.delivery.find(({ name }) => name !== victim)!.name;
  // Postgres grants the lead to the other relay's waiting session as soon as it sees the victim's session end.
  const ledAfterS = await waitFor(`${successor} to lead`, async () => (await relayLeadByReplica(stack))[successor] === 1, 60_000).then(
    () => (Date.now() - killedAt.getTime()) / 1000,
    () => null,
  );
  // A live relay ends its claims within its pass (a second or so); a claim from before the kill that is still there
  // 10 s later is the dead relay's, and runs out (30 s) for the other relay to take.
  await sleep(Math.max(0, killedAt.getTime() + 10_000 - Date.now()));
  const claimed: Array<{ id: number }> = await db('webhook_events')
    .where('relay_claimed_at', '<=', killedAt)
    .whereNull('workflow_started_at')
    .select('id');
  log(`${victim} killed (kill -9): ${exposure.openAtFault} requests open, ${claimed.length} claims left, ${committedAtKill} calls committed`);

  const result = await load.done;
  const common = await verdict(stage, result, events, [exposure], 8 * 60_000);
  // Its claims run out 30 s after they were taken; then the other relay takes them (and finds a workflow the dead
  // relay had started already, or starts it).
  const claimsEnded = () => db('webhook_events').whereIn('id', claimed.map(({ id }) => id)).whereNull('workflow_started_at').first('id');
  await waitFor('the killed relay\'s claims taken over', async () => (await claimsEnded()) === undefined, 120_000).catch(() => undefined);
  const takenOverClaims: Array<{ started: Date | null }> = await db('webhook_events').whereIn('id', claimed.map(({ id }) => id)).select({ started: 'workflow_started_at' });
  const open = await workflowsOpenAt(stage, killedAt);
  const victims = open.filter(({ began }) => began === victimIdentity);
  const finishedElsewhere = victims.filter(({ completed }) => completed !== undefined && completed !== victimIdentity);
  const passed =
    common.passed &&
    leadAtStart[victim] === 1 &&
    // Postgres sees a killed process's connections close at once; the rest is the exposure window and the look.
    ledAfterS !== null &&
    ledAfterS <= SUBSCRIBER_DELAY_MS[DRILL] / 1000 + 5 &&
    victims.length > 0 &&
    finishedElsewhere.length === victims.length &&
    takenOverClaims.every(({ started }) => started !== null) &&
    !stack.processes().has(victim);
  return {
    passed,
    details: {
      killed: victim,
      relayLeadAtStart: leadAtStart,
      // From the kill to the first look that found it leading, after the exposure window (the subscriber's delay and
      // 0.5 s); null: not within a minute.
      otherLeadingAfterS: ledAfterS,
      subscriberDelayMs: SUBSCRIBER_DELAY_MS[DRILL],
      committedAtKill,
      receivedAtKill: exposure.receivedAtFault,
      workflowsOpenAtKill: open.length,
      ofTheKilledReplica: victims.length,
      ofThoseCompletedByTheOther: finishedElsewhere.length,
      claimsLeftByTheKilledRelay: claimed.length,
      ofThoseStartedByTheOther: takenOverClaims.filter(({ started }) => started !== null).length,
      lastClaimTakenOverAfterS: Math.max(0, ...takenOverClaims.map(({ started }) => (started ? (started.getTime() - killedAt.getTime()) / 1000 : 0))),
      deliveredByReplicaSinceItsStart: await deliveredByReplica(stack),
      ...common.details,
    },
  };
}

/** The history service restarted, then every Temporal service stopped and started again in Compose's order. */
async function temporalRestart(stage: StackStage): Promise<DrillOutcome> {
  const { stack, db, subscriber, log } = stage;
  const events = options.events || 1_000;
  const load = startLoad(stage, events, 'temporal');
  const supervisor = supervise(stack, applicationReplicas(stack), log);
  const settleMs = SUBSCRIBER_DELAY_MS[DRILL] + 500;
  try {
    await waitFor('a quarter of the calls and 50 deliveries', () => load.committed() >= events / 4 && subscriber.total() >= 50, 300_000);
    const history = stack.topology.temporal.find((spec) => spec.service === 'temporal' && spec.args.includes('history'))!.name;
    let historyStopS = 0;
    let historyDownS = 0;
    const historyExposure = await withExposure(db, subscriber, settleMs, async (tookEffect) => {
      const stopping = Date.now();
      await stack.stopProcess(history);
      tookEffect();
      historyStopS = (Date.now() - stopping) / 1000;
      await stack.startProcess(history);
      historyDownS = (Date.now() - stopping) / 1000;
    });
    log(`${history} restarted (stop ${historyStopS.toFixed(1)} s, down ${historyDownS.toFixed(1)} s); ${historyExposure.openAtFault} requests were open`);
    const afterHistoryS = await secondsUntilDeliveriesGoOn(stage);

    await waitFor('60 % of the calls', () => load.committed() >= events * 0.6, 600_000);
    const services = temporalServices(stack);
    let clusterDownS = 0;
    const clusterExposure = await withExposure(db, subscriber, settleMs, async (tookEffect) => {
      const stopping = Date.now();
      for (const name of [...services].reverse()) await stack.stopProcess(name);
      tookEffect();
      for (const name of services) await stack.startProcess(name);
      clusterDownS = (Date.now() - stopping) / 1000;
    });
    log(`Temporal cluster restarted (${clusterDownS.toFixed(1)} s from the first stop to the last start); ${clusterExposure.openAtFault} requests were open`);
    const afterClusterS = await secondsUntilDeliveriesGoOn(stage);

    const result = await load.done;
    const common = await verdict(stage, result, events, [historyExposure, clusterExposure], 8 * 60_000);
    return {
      passed: common.passed,
      details: {
        subscriberDelayMs: SUBSCRIBER_DELAY_MS[DRILL],
        history: { stopS: historyStopS, downS: historyDownS, openAtRestart: historyExposure.openAtFault, deliveriesWentOnAfterS: afterHistoryS },
        cluster: { services, downS: clusterDownS, openAtRestart: clusterExposure.openAtFault, deliveriesWentOnAfterS: afterClusterS },
        replicaRestarts: supervisor.restarts,
        deliveredByReplicaSinceItsStart: await deliveredByReplica(stack),
        ...common.details,
      },
    };
  } finally {
    supervisor.stop();
  }
}

/** Postgres, which holds the application's and Temporal's databases, stopped (fast shutdown) for 10 s. */
async function postgresRestart(stage: StackStage): Promise<DrillOutcome> {
  const { stack, db, subscriber, log } = stage;
  const events = options.events || 800;
  const DOWN_MS = 10_000;
  let failedWhileDown = 0;
  let down = false;
  const load = startLoad(stage, events, 'pg', () => (failedWhileDown += down ? 1 : 0));
  // Compose restarts whatever the outage ends, Temporal's services as the application's replicas.
  const supervisor = supervise(stack, [...temporalServices(stack), ...applicationReplicas(stack)], log);
  try {
    await waitFor('a third of the calls and 50 deliveries', () => load.committed() >= events / 3 && subscriber.total() >= 50, 300_000);
    let committedWhileDown = 0;
    const exposure = await withExposure(db, subscriber, SUBSCRIBER_DELAY_MS[DRILL] + 500, async (tookEffect) => {
      await stack.stopProcess('postgres');
      tookEffect();
      down = true;
      const committedAtStop = load.committed();
      log(`Postgres stopped with ${committedAtStop} calls committed, ${subscriber.total()} deliveries received`);
      await sleep(DOWN_MS);
      committedWhileDown = load.committed() - committedAtStop;
      await stack.startProcess('postgres');
      down = false;
    });
    log(`Postgres started again after ${DOWN_MS / 1000} s`);
    const afterS = await secondsUntilDeliveriesGoOn(stage);
    const result = await load.done;
    const common = await verdict(stage, result, events, [exposure], 8 * 60_000);
    return {
      passed: common.passed && committedWhileDown === 0,
      details: {
        subscriberDelayMs: SUBSCRIBER_DELAY_MS[DRILL],
        downMs: DOWN_MS,
        openAtStop: exposure.openAtFault,
        committedWhileDown,
        failedTriesWhileDown: failedWhileDown,
        deliveriesWentOnAfterS: afterS,
        processRestarts: supervisor.restarts,
        deliveredByReplicaSinceItsStart: await deliveredByReplica(stack),
        ...common.details,
      },
    };
  } finally {
    supervisor.stop();
  }
}

/** Every application replica in turn: SIGTERM (its grace period, then SIGKILL), started again, ready, the next. */
async function rollingRestart(stage: StackStage): Promise<DrillOutcome> {
  const { stack, db, subscriber, log } = stage;
  const events = options.events || 1_000;
  const failedDuringRestart: Record<string, number> = {};
  let restarting = false;
  const load = startLoad(stage, events, 'rolling', (outcome) => {
    if (restarting) failedDuringRestart[outcome] = (failedDuringRestart[outcome] ?? 0) + 1;
  });
  await waitFor('a fifth of the calls and 50 deliveries', () => load.committed() >= events / 5 && subscriber.total() >= 50, 300_000);
  const committedBefore = load.committed();
  const startedAt = Date.now();
  restarting = true;
  const exposures: Exposure[] = [];
  const steps: Array<Record<string, unknown>> = [];
  // Caddy leaves a replica that refused a connection out for fail_duration: the next API replica may stop only once
  // the restarted one is back in, or no replica would be left (docs/scaling.md).
  const leftOutMs = durationMs(/^\s*fail_duration\s+(\S+)/m.exec(stack.topology.proxy.caddyfile)?.[1], 0);
  const apiReplicas = new Set(stack.topology.api.map((spec) => spec.name));
  for (const name of [...stack.topology.api, ...stack.topology.delivery].map((spec) => spec.name)) {
    let stopS = 0;
    let startS = 0;
    let stopping = 0;
    const exposure = await withExposure(db, subscriber, SUBSCRIBER_DELAY_MS[DRILL] + 500, async (tookEffect) => {
      stopping = Date.now();
      await stack.stopProcess(name);
      tookEffect();
      stopS = (Date.now() - stopping) / 1000;
      const starting = Date.now();
      await stack.startProcess(name);
      startS = (Date.now() - starting) / 1000;
    });
    if (apiReplicas.has(name)) await sleep(Math.max(0, stopping + leftOutMs + 1_000 - Date.now()));
    exposures.push(exposure);
    steps.push({ replica: name, stopS, startS, openAtStop: exposure.openAtFault });
    log(`${name} restarted (stop ${stopS.toFixed(1)} s, start ${startS.toFixed(1)} s)`);
  }
  restarting = false;
  const durationS = (Date.now() - startedAt) / 1000;
  const callsDuringRestart = load.committed() - committedBefore;
  const result = await load.done;
  const common = await verdict(stage, result, events, exposures, 8 * 60_000);
  const apiErrors = Object.values(failedDuringRestart).reduce((sum, n) => sum + n, 0);
  return {
    passed: common.passed && apiErrors === 0,
    details: {
      subscriberDelayMs: SUBSCRIBER_DELAY_MS[DRILL],
      rollingRestartS: durationS,
      caddyLeavesOutAfterRefusalS: leftOutMs / 1000,
      steps,
      callsCommittedDuringRestart: callsDuringRestart,
      apiErrorsDuringRestart: apiErrors,
      apiErrorsByOutcome: failedDuringRestart,
      deliveredByReplicaSinceItsStart: await deliveredByReplica(stack),
      ...common.details,
    },
  };
}

const DRILLS: Record<string, (stage: StackStage) => Promise<DrillOutcome>> = {
  'delivery-kill': deliveryKill,
  'temporal-restart': temporalRestart,
  'postgres-restart': postgresRestart,
  'rolling-restart': rollingRestart,
};

/** How long the subscriber takes to answer: long enough that attempts are open at each fault. */
const SUBSCRIBER_DELAY_MS: Record<string, number> = {
  'delivery-kill': 1_000,
  'temporal-restart': 200,
  'postgres-restart': 200,
  'rolling-restart': 500,
};

const drill = DRILLS[DRILL];
if (!drill) {
  process.stderr.write(`usage: node dist/drills/stack.js <${Object.keys(DRILLS).join('|')}> [--events=N] [--base-port=P --membership-base-port=M] [--keep-logs]\n`);
  process.exit(2);
}

void runDrill(`stack-${DRILL}`, async (onCleanup) => {
  const stage = await setUpStackDrill(DRILL, onCleanup, { subscriberDelayMs: SUBSCRIBER_DELAY_MS[DRILL], ports: options });
  return drill(stage);
});
