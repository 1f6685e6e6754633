import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedConnectionString, embeddedPasswordFile } from '../../src/db/embedded-credentials';
import { createDb, type Db, migrateToLatest } from '../../src/db/knex';
import { EVENT_INSERTED_CHANNEL } from '../../src/webhook-events/outbox';
import { type EmbeddedCluster, startEmbeddedCluster } from '../support/embedded-cluster';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { listenForInserts } from '../support/insert-notifications';
import { insertEndpoint, insertEvent } from '../support/webhook-rows';

/*
 * The insert trigger (migration 025) sends nothing while Postgres's notification queue is half full, so that a
 * listener that stopped reading (a frozen leader) cannot fill it and fail the commit of every platform call. The
 * queue is 8 GB by default; this server's is the smallest Postgres allows (64 pages, 512 kB), which half fills with
 * some 700 notifications.
 */

let runDir: string;
let server: EmbeddedCluster;
let appUrl: string;
let db: Db;
let endpointId: number;

beforeAll(async () => {
  runDir = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-notify-queue-'));
  // As root, Postgres runs as the `postgres` user, which must be able to reach its data directory.
  await chmod(runDir, 0o755);
  const clusterDir = path.join(runDir, 'pg');
  const port = await freePort();
  server = await startEmbeddedCluster(clusterDir, port, { max_notify_queue_pages: '64' });
  const password = (await readFile(embeddedPasswordFile(clusterDir), 'utf8')).trim();
  const admin = new pg.Client({ connectionString: embeddedConnectionString(password, port) });
  await admin.connect();
  await admin.query('CREATE DATABASE app');
  await admin.end();
  appUrl = embeddedConnectionString(password, port, 'app');
  db = createDb({ connectionString: appUrl });
  await migrateToLatest(db);
  endpointId = await insertEndpoint(db, { url: 'https://crm.example.org/webhooks' });
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await server?.stop();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

const queueUsage = async () => Number((await db.raw('SELECT pg_notification_queue_usage() AS usage')).rows[0].usage);

test('while the notification queue is half full, an insert commits and notifies nothing; once it is read, inserts notify again', async () => {
  const reader = await listenForInserts(appUrl);
  // A listener inside a transaction reads nothing until it ends: the queue keeps every notification from here on.
  const stalled = await listenForInserts(appUrl);
  await stalled.client.query('BEGIN');
  try {
    const before = await insertEvent(db, endpointId);
    await eventually(async () => reader.heard(before.id), { what: 'a notification' });

    let inserted = 0;
    while ((await queueUsage()) < 0.5) {
      await insertEvent(db, endpointId);
      inserted += 1;
      if (inserted > 5_000) throw new Error('the queue never filled half: max_notify_queue_pages not applied?');
    }
    // Notifications arrive in commit order: once a marker is heard, so is everything committed before it.
    const heardUpTo = async (marker: string) => {
      await db.raw(`NOTIFY ${EVENT_INSERTED_CHANNEL}, '${marker}'`);
      await eventually(async () => reader.payloads.at(-1) === marker, { what: `the ${marker}` });
      return reader.payloads.length;
    };
    const heard = await heardUpTo('first marker');
    // Each commits as usual, and notifies no one.
    const unsent = [await insertEvent(db, endpointId), await insertEvent(db, endpointId)];
    expect(await heardUpTo('second marker')).toBe(heard + 1);
    expect(unsent.map((event) => reader.heard(event.id))).toEqual([false, false]);

    await stalled.client.query('COMMIT');
    await eventually(async () => (await queueUsage()) < 0.5, { what: 'the queue to be read' });
    const after = await insertEvent(db, endpointId);
    await eventually(async () => reader.heard(after.id), { what: 'a notification again' });
  } finally {
    await stalled.close();
    await reader.close();
  }
});
