import type { Client } from '@temporalio/client';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { EventIdMetrics } from '../observability/metrics';
import { advanceEventIds, type EventIdAdvance, eventIdsCheckedAt } from '../webhook-events/installation';

/*
 * Event ids are the envelope's `id` and the `webhook-id` header, by which subscribers drop repeats
 * (docs/consuming-webhooks.md). A database that is new, re-created or restored from an older backup would hand out
 * ids its predecessor already sent, and the subscriber would drop those new events as repeats. Temporal remembers
 * what was sent: before this release writes events, the event id sequence is moved past the highest event id among
 * the namespace's delivery workflows (docs/delivery.md#event-ids-and-installations).
 */

/** The workflow types started per event, always under `webhook-event-<id>` or `webhook-event-<id>-<8 hex>`. */
const DELIVERY_WORKFLOW_TYPES = ['deliverEvent', 'resendEvent', 'resumeDelivery'] as const;
const EVENT_WORKFLOW_ID = /^webhook-event-(\d+)(?:-[0-9a-f]{8})?$/;

/**
 * How many workflows are read of each kind (running; ended). Temporal's SQL visibility (the dev server's SQLite, the
 * Compose stack's Postgres) cannot sort by start time: it lists running workflows newest first, then ended ones by
 * when they ended, newest first. The newest event's workflow is among the first of one of the two lists, unless
 * more than this many older events' workflows ended after it did.
 */
const VISIBILITY_PAGE = 1_000;

/** The event id a delivery workflow id names, if it is one. */
function eventIdOfWorkflowId(workflowId: string): number | undefined {
  const match = EVENT_WORKFLOW_ID.exec(workflowId);
  return match ? Number(match[1]) : undefined;
}

/** The highest event id among the newest delivery workflows of the namespace (0: none). */
export async function highestEventIdInTemporal(client: Client, pageSize = VISIBILITY_PAGE): Promise<number> {
  const types = DELIVERY_WORKFLOW_TYPES.map((type) => `'${type}'`).join(', ');
  let highest = 0;
  for (const status of [`ExecutionStatus = 'Running'`, `ExecutionStatus != 'Running'`]) {
    let read = 0;
    for await (const workflow of client.workflow.list({ query: `WorkflowType IN (${types}) AND ${status}`, pageSize })) {
      highest = Math.max(highest, eventIdOfWorkflowId(workflow.workflowId) ?? 0);
      if (++read >= pageSize) break;
    }
  }
  return highest;
}

/** Temporal could not be asked, and this database was never checked against it: events must not be written yet. */
export class EventIdsUnchecked extends Error {
  constructor(cause: unknown) {
    const why = [cause, (cause as Error).cause].filter((err): err is Error => err instanceof Error).map((err) => err.message).join(': ');
    super(
      `Temporal could not be asked for the event ids it delivered before (${why}), and this database was never checked ` +
        'against it: it could hand out ids a subscriber has already seen. Start again once Temporal answers ' +
        '(docs/backups.md#restoring-the-applications-database)',
      { cause },
    );
    this.name = 'EventIdsUnchecked';
  }
}

export interface EventIdCheck {
  db: Db;
  client: Client;
  log: Logger;
  metrics?: EventIdMetrics;
  pageSize?: number;
}

/**
 * Moves the event id sequence past every event id Temporal's delivery workflows name, never backwards; run by the
 * `migrate` job and by the all-in-one start before anything writes events. When Temporal does not answer: a database
 * never checked before (new, re-created, or upgraded from a release without this check) refuses (EventIdsUnchecked),
 * since its ids would start where a predecessor's did; one checked before starts with a warning (a restart during a
 * Temporal outage), and a restore must then be checked by running `migrate` once Temporal answers.
 */
export async function advanceEventIdsPastTemporal({ db, client, log, metrics, pageSize }: EventIdCheck): Promise<EventIdAdvance | undefined> {
  let highest: number;
  try {
    highest = await highestEventIdInTemporal(client, pageSize);
  } catch (err) {
    const checkedAt = await eventIdsCheckedAt(db);
    if (checkedAt === null) throw new EventIdsUnchecked(err);
    log.warn(
      { err, eventIdsCheckedAt: checkedAt },
      'Temporal could not be asked for the event ids it delivered before; starting with the ids as they are (checked before). ' +
        'After a restore, run migrate again once Temporal answers',
    );
    return undefined;
  }
  const advance = await advanceEventIds(db, highest);
  metrics?.eventIdsChecked({ highestInTemporal: highest, sequence: advance.after });
  if (advance.after > advance.before) {
    log.warn(
      { highestInTemporal: highest, ...advance },
      `event ids advanced from ${advance.before} to ${advance.after}: Temporal holds delivery workflows of ids this database had not handed out (re-created or restored database); new events get higher ids`,
    );
  } else {
    log.info({ highestInTemporal: highest, ...advance }, 'event ids checked against Temporal: none to skip');
  }
  return advance;
}
