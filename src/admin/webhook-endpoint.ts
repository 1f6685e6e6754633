import type { Knex } from 'knex';
import { z } from 'zod';
import type { Config } from '../config';
import type { WebhookEndpointModel } from '../db/models';
import { badRequest } from '../shared/errors';
import { storableText } from '../platform/input-schemas';
import { formatTimestamp } from '../shared/time';
import { applyEndpointChange, NEW_ENDPOINT_DEFAULTS, urlPolicyFor, urlProblem } from '../webhooks/endpoint-rules';
import { findEndpoint, saveEndpoint, settingsOf } from '../webhooks/endpoint-store';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { PAYLOAD_VERSIONS } from '../webhooks/payload-versions';
import { checkSubscriberHost, type ResolveHost } from '../webhooks/subscriber-address';

export const endpointChangeInput = z.object({
  url: storableText(4096).trim().min(1).optional(),
  active: z.boolean().optional(),
  payload_version: z.enum(PAYLOAD_VERSIONS).optional(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).max(WEBHOOK_EVENT_TYPES.length * 2).optional(),
  // A colon cannot be part of a basic-auth user name: it separates name and password.
  basic_auth_username: storableText(200).min(1).regex(/^[^:]*$/, 'must not contain a colon').nullable().optional(),
  basic_auth_password: storableText(200).min(1).nullable().optional(),
  signing_secret: storableText(512).min(16).regex(/^\S+$/, 'must not contain whitespace').nullable().optional(),
});

/**
 * The endpoint as the admin shows it. Password and signing secret are write-only: only whether they are set is
 * shown, so they never travel back out once stored.
 */
function presentEndpoint(endpoint: WebhookEndpointModel | undefined) {
  const settings = endpoint ? settingsOf(endpoint) : { url: null, ...NEW_ENDPOINT_DEFAULTS };
  return {
    configured: endpoint !== undefined,
    url: settings.url,
    active: settings.active,
    payload_version: settings.payload_version,
    events: settings.events,
    basic_auth_username: settings.basic_auth_username,
    basic_auth_password_set: settings.basic_auth_password !== null,
    signing_secret_set: settings.signing_secret !== null,
    created_at: endpoint ? formatTimestamp(endpoint.created_at, 'utc') : null,
    updated_at: endpoint ? formatTimestamp(endpoint.updated_at, 'utc') : null,
  };
}

export async function showEndpoint(db: Knex) {
  return presentEndpoint(await findEndpoint(db));
}

/**
 * A new URL's host must not resolve to a non-public address (unless allowed in development). Checked before the
 * endpoint row is locked, because DNS can be slow; deliveries check again, as DNS answers can change.
 */
async function hostProblem(url: string | undefined, config: Config, resolve: ResolveHost): Promise<string | undefined> {
  const policy = urlPolicyFor(config);
  if (url === undefined || policy.allowPrivateAddresses || urlProblem(url, policy)) return undefined;
  const check = await checkSubscriberHost(new URL(url).hostname, { resolve, allowPrivateAddresses: false });
  return check.ok ? undefined : `url: ${check.reason}`;
}

export async function changeEndpoint(
  db: Knex,
  config: Config,
  change: z.output<typeof endpointChangeInput>,
  now: Date,
  resolve: ResolveHost,
) {
  const problem = await hostProblem(change.url, config, resolve);
  if (problem) throw badRequest(problem, 'invalid_body');
  return db.transaction(async (trx) => {
    // Locked so that two admins saving at once apply their changes one after the other.
    const current = await findEndpoint(trx, { forUpdate: true });
    const result = applyEndpointChange(current && settingsOf(current), change, {
      urlPolicy: urlPolicyFor(config),
      cartLogic: config.platform.cartLogic,
    });
    if ('problems' in result) throw badRequest(result.problems.join('; '), 'invalid_body');
    return presentEndpoint(await saveEndpoint(trx, result.settings, now));
  });
}
