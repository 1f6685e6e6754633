import type { Client } from '@temporalio/client';
import type { TemporalTlsSettings } from '../../src/config';
import { environmentSchema } from '../../src/config-variables';
import type { DeliveryFacts } from '../../src/delivery-rules/delivery-texts';
import type { Db } from '../../src/db/knex';
import { createWakeUp } from '../../src/shared/wake-up';
import { describedAs } from '../../src/temporal/delivery-workflows';
import type { EventToStart } from '../../src/webhook-events/event-deliveries';
import { notifiedEvent } from '../../src/webhook-events/outbox';
import { openRelaySession } from '../../src/webhook-events/relay-session';
import { claimUnstartedEvents } from '../../src/webhook-events/relay-claims';

/** A delivered envelope of the service and the transaction id in it, which the ceiling replaces by each event's key. */
export interface EnvelopeTemplate {
  payload: string;
  transactionId: string;
}

/** Where the ceiling's process finds Temporal: the address, and the TLS settings' files where it needs them. */
export interface CeilingTemporal {
  address: string;
  tls?: TemporalTlsSettings;
}

export type CeilingView = 'bare' | 'described' | 'lean';

const WORKFLOW_OF_VIEW: Record<CeilingView, string> = {
  bare: 'ceilingDelivery',
  described: 'ceilingDeliveryDescribed',
  lean: 'ceilingDeliveryDescribedLean',
};

/** How the ceiling starts its workflows. */
export interface StartOptions {
  /**
   * `bare`: nothing for operators; `described`: the delivery workflow's summary, details and search attributes
   * (ceilingDeliveryDescribed); `lean`: the same without the upsert after the delivering attempt.
   */
  view: CeilingView;
  /** Ask for eager starts, as the service's `delivery` role does (its `separate` layout does not). */
  eager: boolean;
  /**
   * The `floor-outbox` system: the process starts the workflow of each event the service's platform calls write to
   * this database, claimed at each notification as the relay claims them, instead of at the bench's request.
   */
  outboxDatabaseUrl?: string;
  /**
   * Under Worker Versioning, as the service's `delivery` role runs unless TEMPORAL_WORKER_VERSIONING=false: the worker
   * serves a Worker Deployment Version, made current by its first look, and starts are eager only while it is current
   * (src/temporal/worker-deployment.ts). `floor-outbox` only.
   */
  versioned?: boolean;
}

/**
 * Whether the service's `delivery` role runs under Worker Versioning with the bench's `--env` for it, read by the
 * service's own setting (TEMPORAL_WORKER_VERSIONING, on by default). `floor-outbox` follows it.
 */
export const serviceVersioned = (env: Record<string, string>): boolean => environmentSchema.shape.TEMPORAL_WORKER_VERSIONING.parse(env.TEMPORAL_WORKER_VERSIONING);

/** The bench asks the ceiling's process to start the workflow of one event; the process answers whether it did. */
export interface StartRequest {
  /** The bench's number for this request: the answer carries it back. */
  request: number;
  key: string;
}

export interface StartAnswer {
  request: number;
  started: boolean;
}

/**
 * The ceiling's client: one workflow per event, its body the template with the event's key as transaction id,
 * started from the worker's own process and NativeConnection so that, eager, Temporal may hand the first workflow
 * task back with the start's answer. Its CPU counts for the ceiling, as the relay's counts for the service.
 */
export function ceilingStarter(client: Client, taskQueue: string, template: EnvelopeTemplate, subscriberHost: string, { view, eager }: StartOptions) {
  const envelope = JSON.parse(template.payload) as { event: string; environment?: string };
  let eventId = 0;
  const description = (key: string) => {
    const facts: DeliveryFacts = {
      eventId: ++eventId,
      eventType: envelope.event,
      payloadVersion: 'v2.1',
      subscriberHost,
      transactionId: key,
      environment: envelope.environment ?? null,
    };
    return describedAs(facts, { status: 'waiting', attempts: 0 });
  };
  return async ({ request, key }: StartRequest): Promise<StartAnswer> => {
    try {
      await client.workflow.start(WORKFLOW_OF_VIEW[view], {
        taskQueue,
        workflowId: key,
        args: [template.payload.replaceAll(template.transactionId, key)],
        workflowTaskTimeout: '10 seconds',
        requestEagerStart: eager,
        ...(view === 'bare' ? {} : description(key)),
      });
      return { request, started: true };
    } catch {
      return { request, started: false };
    }
  };
}

/**
 * The `floor-outbox` relay: starts each event its notification names (migration 025) with the facts it carries, and
 * when it takes the lead or a notification names none, claims the unstarted events with the relay's statement and
 * starts those, as the service's leading relay does (src/temporal/outbox-relay.ts); eagerly where asked. Each first
 * attempt marks its event started (src/webhook-events/attempts.ts), as the service's eager starts leave it to; each
 * start carries what the view's does. None of the relay's bookkeeping beyond that: no end of the claim, no backoff,
 * no sweep, no memo, and no poll (the service's claims once a second, leaving alone what it is starting). `eager` is
 * asked at each pass, as the relay asks it. Returns what stops it.
 */
export async function relayFromOutbox(client: Client, taskQueue: string, db: Db, eager: () => boolean): Promise<() => Promise<void>> {
  const wakeUp = createWakeUp();
  let notified: EventToStart[] = [];
  let claim = true;
  // The relay's session, as the service's relay opens it; the only relay on its database, it leads at once.
  const session = await openRelaySession(db, {
    onInserted: (payload) => {
      const event = notifiedEvent(payload);
      if (event) notified.push(event);
      else claim = true;
      wakeUp.notify();
    },
    onLead: wakeUp.notify,
    onLost: () => undefined,
  });
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      let events = notified;
      notified = [];
      if (claim) {
        claim = false;
        ({ events } = await claimUnstartedEvents(db, 100, 30_000));
      }
      await Promise.allSettled(
        events.map(({ identity, facts }) =>
          client.workflow.start('ceilingDeliveryFromOutbox', {
            taskQueue,
            // Named after the bench's key, the event's transaction id, as the view's workflows are: --trace-sample
            // finds their histories by it.
            workflowId: facts.transactionId ?? identity.workflowId,
            args: [identity.eventId],
            workflowTaskTimeout: '10 seconds',
            requestEagerStart: eager(),
            ...describedAs(facts, { status: 'waiting', attempts: 0 }),
          }),
        ),
      );
      await wakeUp.wait(60_000, { early: true });
    }
  })();
  return async () => {
    stopped = true;
    wakeUp.stop();
    await loop;
    await session.close();
  };
}
