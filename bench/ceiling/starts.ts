import type { Client } from '@temporalio/client';
import type { DeliveryFacts } from '../../src/delivery-rules/delivery-texts';
import { describedAs } from '../../src/temporal/delivery-workflows';

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
 * relay's counts for the service. `described`: with the delivery workflow's summary, details and search attributes
 * (bench/ceiling/workflow.ts, ceilingDeliveryDescribed), the operators' view of issue 14.
 */
export function ceilingStarter(client: Client, taskQueue: string, template: EnvelopeTemplate, subscriberHost: string, described: boolean) {
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
  return async ({ key }: StartRequest): Promise<StartAnswer> => {
    try {
      await client.workflow.start(described ? 'ceilingDeliveryDescribed' : 'ceilingDelivery', {
        taskQueue,
        workflowId: key,
        args: [template.payload.replaceAll(template.transactionId, key)],
        workflowTaskTimeout: '10 seconds',
        requestEagerStart: true,
        ...(described ? description(key) : {}),
      });
      return { key, started: true };
    } catch {
      return { key, started: false };
    }
  };
}
