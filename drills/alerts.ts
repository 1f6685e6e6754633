import { startAlertReceiver } from '../stack/alert-receiver';
import { flags } from '../stack/cli';
import { recordCheckouts } from './support/platform-load';
import { runDrill } from './support/report';
import { setUpStackDrill, stackDrillFlags } from './support/stack-stage';
import { waitFor } from './support/wait';
import type { Db } from '../src/db/knex';
import { RELAY_LEAD_KEY } from '../src/webhook-events/relay-session';

/*
 * The alert drill on the production-like stack of `npm run stack`: Prometheus and Alertmanager as docker-compose.yml
 * runs them (scrape and evaluation every 15 s, Alertmanager's first notification of a group after 30 s), the rules of
 * deploy/prometheus/alerts/ as shipped, with their `for:` windows; this drill is Alertmanager's webhook receiver.
 *
 *   node dist/drills/alerts.js [--base-port=P --membership-base-port=M] [--keep-logs]
 *
 * 0. The always-firing Watchdog reaches the receiver: the pipeline works.
 * 1. Every delivery replica stopped (SIGTERM), checkouts recorded meanwhile: TemporalNoWorkerPolling fires within its
 *    5 min `for:` (plus a scrape, an evaluation and the 30 s group wait), and the recorded events, which nobody
 *    relays, fire WebhookEventsStuck (the drill sets DELIVERY_STUCK_AFTER_MINUTES=1, as a shell would).
 * 2. The replicas started again, and from then on the subscriber answers 500 to everything, under a steady load (one
 *    step, to keep the drill within half an hour): both alerts of step 1 clear and their resolved notifications
 *    arrive; WebhookEndpointFailing fires (the drill sets ENDPOINT_FAILING_AFTER_MINUTES=1), then
 *    WebhookDeliveriesFailing after its 15 min `for:`.
 * 3. The subscriber well again, the relays' lead taken by a session of the drill (a leader that relays nothing: a
 *    frozen process, or one cut off from Temporal): five checkouts are still delivered, each claimed by a relay only
 *    once it waited 3 s; WebhookRelayLeaderless fires after its 5 min `for:`, and resolves once the drill lets go.
 * Each notification is timed from the start of its step; the verdict (JSON) goes to RELIABILITY.md.
 */

const options = flags({ ...stackDrillFlags }, process.argv.slice(2));
const SCRAPE_EVALUATE_AND_GROUP_S = 15 + 15 + 30;
const MINUTE = 60_000;

interface Notified {
  step: string;
  alert: string;
  status: 'firing' | 'resolved';
  secondsAfterStep: number;
  /** The alert's `for:` plus a scrape, an evaluation and Alertmanager's group wait (or group interval, when resolved). */
  limitSeconds: number;
}

void runDrill('alerts', async (onCleanup) => {
  const stage = await setUpStackDrill('alerts', onCleanup, {
    subscriberDelayMs: 0,
    ports: options,
    shellEnv: { DELIVERY_STUCK_AFTER_MINUTES: '1', ENDPOINT_FAILING_AFTER_MINUTES: '1' },
  });
  const { log, stack, api, subscriber } = stage;
  const receiver = await startAlertReceiver(stack.alertReceiverUrl);
  onCleanup(() => receiver.close());
  const notified: Notified[] = [];
  const expectNotification = async (step: string, since: number, alert: string, status: 'firing' | 'resolved', limitSeconds: number) => {
    const notification = await receiver.waitFor(alert, status, (limitSeconds + 120) * 1000);
    const secondsAfterStep = Math.round((notification.receivedAt.getTime() - since) / 1000);
    log(`${step}: ${alert} ${status} at the receiver ${secondsAfterStep} s after the step began (limit ${limitSeconds} s)`);
    notified.push({ step, alert, status, secondsAfterStep, limitSeconds });
  };

  const started = Date.now();
  await expectNotification('0 pipeline', started, 'Watchdog', 'firing', SCRAPE_EVALUATE_AND_GROUP_S + 60);
  await recordCheckouts(api, { count: 10, concurrency: 2, prefix: 'alerts-warm-up', deadlineMs: 2 * MINUTE });
  await waitFor('10 deliveries', () => subscriber.total() >= 10, 2 * MINUTE);

  const stopped = Date.now();
  log('1: stopping every delivery replica');
  await Promise.all(stack.topology.delivery.map(({ name }) => stack.stopProcess(name)));
  await recordCheckouts(api, { count: 20, concurrency: 2, prefix: 'alerts-no-worker', deadlineMs: 2 * MINUTE });
  await expectNotification('1 no delivery replica', stopped, 'TemporalNoWorkerPolling', 'firing', 5 * 60 + SCRAPE_EVALUATE_AND_GROUP_S);
  await expectNotification('1 no delivery replica', stopped, 'WebhookEventsStuck', 'firing', (1 + 5) * 60 + SCRAPE_EVALUATE_AND_GROUP_S);

  const restarted = Date.now();
  log('2: the subscriber answers 500 to everything; starting the delivery replicas again; one checkout every 4 s');
  subscriber.answerWith(500);
  for (const { name } of stack.topology.delivery) await stack.startProcess(name);
  void recordCheckouts(api, { count: 400, concurrency: 1, pauseMs: 4_000, prefix: 'alerts-failing', deadlineMs: 30 * MINUTE }).catch(() => undefined);
  const step = '2 replicas back, subscriber answers 500';
  // A resolved alert is notified with its group's next flush: within group_interval (5 min).
  await Promise.all([
    ...['TemporalNoWorkerPolling', 'WebhookEventsStuck'].map((alert) => expectNotification(step, restarted, alert, 'resolved', 5 * 60 + SCRAPE_EVALUATE_AND_GROUP_S)),
    expectNotification(step, restarted, 'WebhookEndpointFailing', 'firing', 60 + 60 + SCRAPE_EVALUATE_AND_GROUP_S),
  ]);
  // Over half of 30 min of attempts failed (a minute or two with the earlier successes in the window), then 15 min.
  await expectNotification(step, restarted, 'WebhookDeliveriesFailing', 'firing', 2 * 60 + 15 * 60 + SCRAPE_EVALUATE_AND_GROUP_S);
  subscriber.answerWith(undefined);

  const held = Date.now();
  log("3: the relays' lead held by a session of the drill; five checkouts");
  const release = await takeTheLead(stage.db);
  await recordCheckouts(api, { count: 5, concurrency: 1, prefix: 'alerts-leaderless', deadlineMs: 2 * MINUTE });
  const leaderless = () =>
    stage.db('webhook_events').whereLike('transaction_id', 'alerts-leaderless-%').select<Array<{ status: string; waited_s: number }>>(
      'status',
      stage.db.raw('extract(epoch FROM relay_claimed_at - created_at)::float AS waited_s'),
    );
  await waitFor('the five events delivered without a leading relay', async () => (await leaderless()).filter(({ status }) => status === 'delivered').length === 5, 2 * MINUTE);
  const claimedAfterS = (await leaderless()).map(({ waited_s }) => Number(waited_s.toFixed(1)));
  log(`3: delivered, each claimed after waiting ${claimedAfterS.join(', ')} s`);
  await expectNotification('3 lead held outside', held, 'WebhookRelayLeaderless', 'firing', 5 * 60 + SCRAPE_EVALUATE_AND_GROUP_S);
  const released = Date.now();
  await release();
  await expectNotification('3 lead let go', released, 'WebhookRelayLeaderless', 'resolved', 5 * 60 + SCRAPE_EVALUATE_AND_GROUP_S);

  return {
    passed: notified.every(({ secondsAfterStep, limitSeconds }) => secondsAfterStep <= limitSeconds) && claimedAfterS.every((waited) => waited >= 3),
    details: {
      settings: 'scrape and evaluation 15 s, group_wait 30 s, group_interval 5 min; DELIVERY_STUCK_AFTER_MINUTES=1, ENDPOINT_FAILING_AFTER_MINUTES=1',
      notified,
      leaderlessEventsClaimedAfterS: claimedAfterS,
      notifications: receiver.notifications.length,
      requestsAtSubscriber: subscriber.total(),
    },
  };
});

/**
 * Takes the relays' lead on a connection of the drill's own and holds it until the returned function lets go. The
 * relays' sessions (the holder's and the waiting one's) are ended first, so that the drill's try comes before their
 * new sessions queue for the lock again. Returns once the drill holds it.
 */
async function takeTheLead(db: Db): Promise<() => Promise<void>> {
  const connection = await db.client.acquireConnection();
  const onConnection = (sql: string) => db.raw(sql).connection(connection);
  for (let tries = 1; ; tries += 1) {
    await onConnection(
      `SELECT pg_terminate_backend(pid) FROM pg_locks
        WHERE locktype = 'advisory' AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    const { rows } = await onConnection(`SELECT pg_try_advisory_lock(${RELAY_LEAD_KEY}) AS taken`);
    if (rows[0].taken) break;
    if (tries === 20) throw new Error("the drill could not take the relays' lead in 20 tries");
  }
  return async () => {
    await onConnection(`SELECT pg_advisory_unlock(${RELAY_LEAD_KEY})`);
    await db.client.releaseConnection(connection);
  };
}
