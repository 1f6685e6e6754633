import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, type Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { startDeliveryWorkflow } from '../../src/temporal/delivery-workflows';
import { createDeliveryWorker, type DeliveryWorkerOptions, deliveryWorkflowsPath } from '../../src/temporal/worker';
import { findEventDelivery } from '../../src/webhooks/event-store';

/** Starts an event's delivery workflow as the relay would, with what the event says about itself. */
export async function startDelivery(db: Db, client: Client, taskQueue: string, eventId: number) {
  const delivery = await findEventDelivery(db, eventId);
  if (!delivery) throw new Error(`no webhook event ${eventId}`);
  return startDeliveryWorkflow(client, taskQueue, delivery.facts);
}

/** The delivery workflows, bundled for a test file: webpack takes a second or two, so once per file, not per worker. */
export function bundleDeliveryWorkflows(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: deliveryWorkflowsPath, logger: new DefaultLogger('WARN') });
}

/**
 * A delivery worker as the tests run it: namespace `default`, silent logs, subscribers on loopback allowed;
 * everything else as createDeliveryWorker makes it in production.
 */
export function createTestWorker(
  options: Pick<DeliveryWorkerOptions, 'connection' | 'taskQueue' | 'db' | 'keyring'> & Partial<DeliveryWorkerOptions>,
): Promise<Worker> {
  return createDeliveryWorker({ namespace: 'default', log: createLogger('silent'), allowPrivateAddresses: true, ...options });
}
