import type { Knex } from 'knex';
import { EVENTS } from './tables';

/*
 * The installation (migration 020): the random id of this database, made once, which tells this deployment's workers
 * and workflows from those of another database on the same Temporal namespace, and the event id sequence that must
 * never hand out an id a predecessor of this database already sent (docs/delivery.md#event-ids-and-installations).
 */

const INSTALLATION = 'installation';

const known = new WeakMap<Knex, Promise<string>>();

/** This database's installation id. Read once per pool: it never changes while the database lives. */
export function readInstallation(db: Knex): Promise<string> {
  let id = known.get(db);
  if (!id) {
    id = db(INSTALLATION)
      .first('id')
      .then((row: { id: string } | undefined) => {
        if (!row) throw new Error('the installation row is missing: run the migrations (migration 020)');
        return row.id;
      });
    // A failed read (Postgres down) is not remembered: the next call tries again.
    id.catch(() => known.delete(db));
    known.set(db, id);
  }
  return id;
}

/** An event's key (`uuid`), which the attempt compares with its workflow's (src/delivery-rules/event-identity.ts). */
export async function readEventKey(db: Knex, eventId: number): Promise<string | undefined> {
  const row: { uuid: string } | undefined = await db(EVENTS).where({ id: eventId }).first('uuid');
  return row?.uuid;
}

/** Whether this database's event ids were ever checked against Temporal (advanceEventIds ran at least once). */
export async function eventIdsCheckedAt(db: Knex): Promise<Date | null> {
  const row: { event_ids_checked_at: Date | null } | undefined = await db(INSTALLATION).first('event_ids_checked_at');
  return row?.event_ids_checked_at ?? null;
}

export interface EventIdAdvance {
  /** The highest id the sequence had handed out before. */
  before: number;
  /** The highest id handed out from now on counts as: `before`, or the id Temporal knows if that is higher. */
  after: number;
}

/**
 * Moves the event id sequence forward past `highestKnown` (an id a delivery workflow in Temporal was started for),
 * never backwards, and notes the check. Inserts wait meanwhile (EXCLUSIVE lock, milliseconds): no insert holds an id
 * between reading the sequence and setting it, so the sequence cannot be set below an id already handed out.
 */
export async function advanceEventIds(db: Knex, highestKnown: number): Promise<EventIdAdvance> {
  return db.transaction(async (trx) => {
    await trx.raw(`LOCK TABLE ${EVENTS} IN EXCLUSIVE MODE`);
    const { rows } = await trx.raw(`SELECT pg_get_serial_sequence('${EVENTS}', 'id') AS name`);
    const sequence: string = rows[0].name;
    const state = (await trx.raw('SELECT last_value, is_called FROM ??', [sequence])).rows[0] as { last_value: string; is_called: boolean };
    const before = Number(state.last_value) - (state.is_called ? 0 : 1);
    const after = Math.max(before, highestKnown);
    if (after > before) await trx.raw('SELECT setval(?, ?, true)', [sequence, after]);
    await trx(INSTALLATION).update({ event_ids_checked_at: trx.fn.now() });
    return { before, after };
  });
}
