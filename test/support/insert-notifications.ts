import pg from 'pg';
import { EVENT_INSERTED_CHANNEL, notifiedEvent } from '../../src/webhook-events/outbox';

/** A session of its own that LISTENs for the insert trigger's notifications (migration 025), as the relay does. */
export interface InsertListener {
  client: pg.Client;
  /** Every payload heard, in order ('' for one that names no event). */
  payloads: string[];
  /** Whether a notification named this event. */
  heard(eventId: number): boolean;
  close(): Promise<void>;
}

export async function listenForInserts(connectionString: string): Promise<InsertListener> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  const payloads: string[] = [];
  client.on('notification', ({ payload }) => payloads.push(payload ?? ''));
  try {
    await client.query(`LISTEN ${EVENT_INSERTED_CHANNEL}`);
  } catch (err) {
    await client.end();
    throw err;
  }
  return {
    client,
    payloads,
    heard: (eventId) => payloads.some((payload) => notifiedEvent(payload)?.identity.eventId === eventId),
    close: () => client.end(),
  };
}
