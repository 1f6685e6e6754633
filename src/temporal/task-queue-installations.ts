import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { readInstallation } from '../webhook-events/installation';

/*
 * One task queue, one installation (docs/delivery.md#event-ids-and-installations). A worker polling the task queue
 * runs every delivery workflow on it against its own database, so two deployments (two databases) on one namespace
 * and task queue would run each other's workflows. A worker names its installation in its identity, and a process
 * that would start workflows or poll for them looks at who polls the task queue first.
 */

/** The worker identity Temporal shows (task queue pollers, history): the SDK's `pid@host`, and the installation. */
export const workerIdentity = (installation: string) => `${process.pid}@${os.hostname()} installation ${installation}`;

const INSTALLATION_IN_IDENTITY = /\binstallation ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/;

/** The installation a poller's identity names; undefined for a worker that names none (a release before 020, a tool). */
const installationOfIdentity = (identity: string): string | undefined => INSTALLATION_IN_IDENTITY.exec(identity)?.[1];

/**
 * How long after its last poll a poller still counts as alive. An idle worker polls again at least every minute
 * (Temporal answers an empty long poll after 60 s), so a poller not seen for longer has stopped; Temporal itself lists
 * pollers for some minutes after they stop.
 */
export const LIVE_POLLER_MS = 90_000;

/** A poller of another installation, as DescribeTaskQueue lists it. */
export interface ForeignPoller {
  identity: string;
  installation: string;
  lastAccessMs: number;
}

/** The task queue is polled by a worker of another installation: this process must not poll it or start workflows on it. */
export class TaskQueueOfAnotherInstallation extends Error {
  constructor(
    readonly taskQueue: string,
    readonly pollers: ForeignPoller[],
  ) {
    const others = [...new Set(pollers.map((poller) => `${poller.installation} (${poller.identity})`))].join(', ');
    super(
      `TEMPORAL_TASK_QUEUE ${taskQueue} is polled by a worker of another installation (another database): ${others}. ` +
        'Each deployment needs a task queue (or namespace) of its own: set TEMPORAL_TASK_QUEUE, or stop the other deployment',
    );
    this.name = 'TaskQueueOfAnotherInstallation';
  }
}

/** temporal.api.enums.v1: TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY, TASK_QUEUE_KIND_NORMAL. */
const WORKFLOW_TASKS = 1;
const ACTIVITY_TASKS = 2;
const NORMAL_KIND = 1;

/** The live pollers of other installations on the task queue (workflow and activity tasks). */
export async function foreignPollers(client: Client, taskQueue: string, installation: string, now = Date.now()): Promise<ForeignPoller[]> {
  const found: ForeignPoller[] = [];
  for (const taskQueueType of [WORKFLOW_TASKS, ACTIVITY_TASKS]) {
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue, kind: NORMAL_KIND },
      taskQueueType,
    });
    for (const poller of pollers ?? []) {
      const identity = poller.identity ?? '';
      const theirs = installationOfIdentity(identity);
      const lastAccessMs = tsToMs(poller.lastAccessTime);
      if (theirs !== undefined && theirs !== installation && now - lastAccessMs < LIVE_POLLER_MS) found.push({ identity, installation: theirs, lastAccessMs });
    }
  }
  return found;
}

export interface TaskQueueCheckOptions {
  /** This deployment's database, whose installation this process is. */
  db: Db;
  client: Client;
  taskQueue: string;
  log: Logger;
  /**
   * How long a poller of another installation may take to show that it stopped (its last poll ageing past
   * LIVE_POLLER_MS) before the start is refused: a database re-created under a deployment that just stopped is not
   * refused for the stopped worker. Default: LIVE_POLLER_MS; a live worker polls again within it.
   */
  graceMs?: number;
  pollIntervalMs?: number;
}

/**
 * Refuses (throws TaskQueueOfAnotherInstallation) when a worker of another installation polls the task queue and
 * keeps polling for `graceMs`. Workers that name no installation (release 0.1.0's, during a rolling deploy) are never
 * taken as foreign. Temporal not answering is no refusal: logged, and the attempts' own check (activities/
 * delivery-activities.ts) stays the guard.
 */
export async function refuseTaskQueueOfAnotherInstallation({
  db,
  client,
  taskQueue,
  log,
  graceMs = LIVE_POLLER_MS,
  pollIntervalMs = 5_000,
}: TaskQueueCheckOptions): Promise<void> {
  const installation = await readInstallation(db);
  log.info({ installation, taskQueue }, `installation ${installation} on task queue ${taskQueue}`);
  const deadline = Date.now() + graceMs;
  for (let warned = false; ; warned = true) {
    let pollers: ForeignPoller[];
    try {
      pollers = await foreignPollers(client, taskQueue, installation);
    } catch (err) {
      log.warn({ err, taskQueue }, 'could not ask Temporal who polls the task queue; starting without that check');
      return;
    }
    if (pollers.length === 0) return;
    if (Date.now() >= deadline) throw new TaskQueueOfAnotherInstallation(taskQueue, pollers);
    if (!warned) {
      log.warn(
        { taskQueue, installation, pollers, waitMs: deadline - Date.now() },
        'a worker of another installation polled this task queue lately; waiting to see whether it stopped',
      );
    }
    await sleep(pollIntervalMs);
  }
}
