import type { Client } from '@temporalio/client';

/** A delivered envelope of the service and the transaction id in it, which the ceiling replaces by each event's key. */
export interface EnvelopeTemplate {
  payload: string;
  transactionId: string;
}

/** The bench asks the ceiling's process to start the workflow of one event; the process answers whether it did. */
export interface StartRequest {
  key: string;
}

export interface StartAnswer {
  key: string;
  started: boolean;
}

/**
 * The ceiling's client: one workflow per event, its body the template with the event's key as transaction id,
 * started from the worker's own process and NativeConnection so that, as the service's `delivery` role does, Temporal
 * may hand the first workflow task back with the start's answer (eager start). Its CPU counts for the ceiling, as the
 * relay's counts for the service.
 */
export function ceilingStarter(client: Client, taskQueue: string, template: EnvelopeTemplate) {
  return async ({ key }: StartRequest): Promise<StartAnswer> => {
    try {
      await client.workflow.start('ceilingDelivery', {
        taskQueue,
        workflowId: key,
        args: [template.payload.replaceAll(template.transactionId, key)],
        workflowTaskTimeout: '10 seconds',
        requestEagerStart: true,
      });
      return { key, started: true };
    } catch {
      return { key, started: false };
    }
  };
}
