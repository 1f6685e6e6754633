import type { Knex } from 'knex';
import pg from 'pg';
import { EVENT_INSERTED_CHANNEL } from './outbox';

/**
 * The outbox relay's session: a connection of its own that waits for the relay's lead and, once it holds it, LISTENs
 * for new events. The lead is a session-level advisory lock, one per database: of the relays on one database, the one
 * holding it starts each new event at once, so that every eager start and first attempt lands in one process, and
 * the others wake once per poll only for events left waiting (src/temporal/outbox-relay.ts). Postgres hands the lock
 * to a waiting session the moment the holder's session ends, a replica killed included, so the next relay leads
 * without a poll. Nothing relies on the lock for safety: two relays claiming at once only split the work, as they did
 * before there was a lead (BENCHMARKS.md, issue 29).
 */

export interface RelaySession {
  /** True from the moment this session holds the lead and LISTENs, until it is closed or lost. */
  readonly leading: boolean;
  /** False once closed or lost. */
  readonly open: boolean;
  /** Safe at any time, also after the connection was lost; releases the lead with the session. */
  close(): Promise<void>;
}

export interface RelaySessionEvents {
  /** A transaction that inserted an event committed (while leading): the notification's payload (migration 025). */
  onInserted: (payload: string | undefined) => void;
  /** This session took the lead. */
  onLead: () => void;
  /** The connection failed, or the lead could not be taken or listened on; the session is closed. */
  onLost: (err: Error) => void;
}

/** The lead's lock key, computed by Postgres from a name as the newsletter's locks are (src/newsletter/newsletter-store.ts). */
export const RELAY_LEAD_KEY = `hashtextextended('webhook outbox relay lead', 0)`;
const TAKE_LEAD = `SELECT pg_advisory_lock(${RELAY_LEAD_KEY})`;

/**
 * The session's settings, each only where the server has it (older servers lack some). No time limit a database or
 * role may set ends the wait for the lead or the leader's idle session. And a session whose client is gone (a host
 * that vanished, a connection a firewall dropped) ends within some 25 s, idle or waiting, so that it neither keeps
 * the lead nor a place in the queue for it.
 */
const SESSION_SETTINGS: Record<string, string> = {
  statement_timeout: '0',
  lock_timeout: '0',
  idle_session_timeout: '0',
  transaction_timeout: '0',
  tcp_keepalives_idle: '10',
  tcp_keepalives_interval: '5',
  tcp_keepalives_count: '3',
  client_connection_check_interval: '5000',
};
const SET_SESSION = `SELECT set_config(wanted.name, wanted.setting, false)
  FROM json_each_text($1::json) AS wanted(name, setting) JOIN pg_settings USING (name)`;

/**
 * Opens the relay's session and asks for the lead, which it waits for without a time limit: resolves once connected,
 * and calls `onLead` when the lead is taken (at once where no other relay holds it).
 */
export async function openRelaySession(db: Knex, { onInserted, onLead, onLost }: RelaySessionEvents): Promise<RelaySession> {
  const connection = new pg.Client({
    ...(db.client.connectionSettings as pg.ClientConfig),
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  let closed = false;
  let leading = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    leading = false;
    await connection.end().catch(() => undefined);
  };
  const lose = (err: Error) => {
    if (closed) return;
    void close();
    onLost(err);
  };
  // Whatever a notification carries, it must not throw into pg's socket handler: that would end the process.
  connection.on('notification', ({ payload }) => {
    try {
      onInserted(payload);
    } catch (err) {
      lose(err as Error);
    }
  });
  connection.on('error', lose);
  try {
    await connection.connect();
    await connection.query(SET_SESSION, [JSON.stringify(SESSION_SETTINGS)]);
  } catch (err) {
    await close();
    throw err;
  }
  void (async () => {
    await connection.query(TAKE_LEAD);
    await connection.query(`LISTEN ${EVENT_INSERTED_CHANNEL}`);
    if (closed) return;
    leading = true;
    onLead();
  })().catch((err: Error) => lose(err));
  return {
    get leading() {
      return leading;
    },
    get open() {
      return !closed;
    },
    close,
  };
}
