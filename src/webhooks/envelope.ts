import type { Environment } from '../shared/environment';
import { formatTimestamp } from '../shared/time';
import type { EventSearchKeys } from './event-search-keys';
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
  /** The event's `data`, with the keys it is found by (a renderer's RenderedEvent). */
  rendered: { data: Record<string, unknown>; searchKeys: EventSearchKeys };
}

/**
 * An event rendered once: the exact bytes sent unchanged on every attempt, and beside them the facts the outbox
 * stores as columns, as the renderer knew them (no one parses the bytes to find them again).
 */
export interface RenderedPayload {
  text: string;
  environment: EnvelopeEnvironment;
  searchKeys: EventSearchKeys;
}

export function renderEnvelope({ id, event, createdAt, environment, rendered }: Envelope): RenderedPayload {
  const text = JSON.stringify({ id, event, created_at: formatTimestamp(createdAt, 'utc'), environment, data: rendered.data });
  return { text, environment, searchKeys: rendered.searchKeys };
}
