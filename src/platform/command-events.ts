import type { Knex } from 'knex';
import type { Environment } from '../shared/environment';
import { envelopeEnvironment } from '../webhooks/envelope';
import { type EventCause, recordWebhookEvents } from '../webhook-events/record-events';
import type { PlatformContext } from './context';

export interface CommandEvent extends Omit<EventCause, 'environment'> {
  /** The environment of the records the event is about; the envelope names it (`stage` on a staging platform). */
  environment: Environment;
}

/** Records the webhook events a platform command causes, inside its transaction (see recordWebhookEvents). */
export function recordCommandEvents(trx: Knex.Transaction, ctx: PlatformContext, { environment, ...cause }: CommandEvent): Promise<number[]> {
  return recordWebhookEvents(trx, { ...cause, environment: envelopeEnvironment(environment, ctx.platform.isStaging) });
}
