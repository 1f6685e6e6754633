import type { Client } from '@temporalio/client';
import type { Db } from '../../src/db/knex';
import { startDeliveryWorkflow } from '../../src/temporal/delivery-workflows';
import { findEventDelivery } from '../../src/webhooks/event-store';

/** Starts an event's delivery workflow as the relay would, with what the event says about itself. */
export async function startDelivery(db: Db, client: Client, taskQueue: string, eventId: number) {
  const delivery = await findEventDelivery(db, eventId);
  if (!delivery) throw new Error(`no webhook event ${eventId}`);
  return startDeliveryWorkflow(client, taskQueue, delivery.facts);
}
