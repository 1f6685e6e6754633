import type { Environment } from '../shared/environment';
import { formatTimestamp } from '../shared/time';
import type { WebhookEventType } from './event-types';

export const ENVELOPE_ENVIRONMENTS = ['prod', 'stage', 'test'] as const;
export type EnvelopeEnvironment = (typeof ENVELOPE_ENVIRONMENTS)[number];

/**
 * The envelope's `environment`: TEST is `test`; PRODUCTION is `prod`, or `stage` on a platform configured as
 * staging. A newsletter sign-up passes its own environment (`signUpEnvironment`).
 */
export function envelopeEnvironment(environment: Environment, platformIsStaging: boolean): EnvelopeEnvironment {
  if (environment === 'TEST') return 'test';
  return platformIsStaging ? 'stage' : 'prod';
}

export interface Envelope {
  id: number;
  event: WebhookEventType;
  createdAt: Date;
  environment: EnvelopeEnvironment;
  data: Record<string, unknown>;
}

/** The exact bytes of an event, sent unchanged on every attempt. */
export function renderEnvelope({ id, event, createdAt, environment, data }: Envelope): string {
  return JSON.stringify({ id, event, created_at: formatTimestamp(createdAt, 'utc'), environment, data });
}
