import type { Knex } from 'knex';
import { z } from 'zod';
import type { Config } from '../config';
import { ApiError, type Problem } from '../shared/errors';
import { storableText } from '../shared/value-schemas';
import { formatTimestamp } from '../shared/time';
import { applyEndpointChange, NEW_ENDPOINT_DEFAULTS } from '../webhook-endpoint/endpoint-rules';
import { urlPolicyFor, urlProblem } from '../webhooks/subscriber-url';
import { createKeyring } from '../secrets/keyring';
import { type EndpointRecord, findEndpoint, findEndpointSettingsForUpdate, saveEndpoint } from '../webhook-endpoint/endpoint-store';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { PAYLOAD_VERSIONS } from '../webhooks/payload-versions';
import { MIN_SIGNING_KEY_BYTES, signingSecretProblem } from '../webhooks/signature';
import { checkSubscriberHost, type ResolveHost } from '../webhooks/subscriber-address';

export const endpointChangeInput = z.object({
  // Not trimmed: what the URL holds at its ends (a tab, a line break) is refused by urlProblem, not dropped unseen.
  url: storableText(4096).min(1).optional(),
  active: z.boolean().optional(),
  payload_version: z.enum(PAYLOAD_VERSIONS).optional(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).max(WEBHOOK_EVENT_TYPES.length * 2).optional(),
  // A colon cannot be part of a basic-auth user name: it separates name and password.
  basic_auth_username: storableText(200).min(1).regex(/^[^:]*$/, 'must not contain a colon').nullable().optional(),
  basic_auth_password: storableText(200).min(1).nullable().optional(),
  signing_secret: storableText(512)
    .regex(/^\S+$/, 'must not contain whitespace')
    .check((check) => {
      const problem = signingSecretProblem(check.value);
      if (problem) check.issues.push({ code: 'custom', message: problem, input: check.value });
    })
    .nullable()
    .optional()
    .meta({
      description: `\`whsec_\` and the standard base64 of a key of ${MIN_SIGNING_KEY_BYTES} bytes or more (Standard Webhooks), or a plain secret of ${MIN_SIGNING_KEY_BYTES} bytes or more (its UTF-8 bytes are the key); at most 512 characters, no whitespace; write-only`,
    }),
});

/**
 * The endpoint as the admin shows it. Password and signing secret are write-only: only whether they are set is
 * shown, so they never travel back out once stored (the store does not even read them for this).
 */
function presentEndpoint(endpoint: EndpointRecord | undefined) {
  const shown = endpoint ?? { url: null, ...NEW_ENDPOINT_DEFAULTS, basic_auth_password_set: false, signing_secret_set: false };
  return {
    configured: endpoint !== undefined,
    url: shown.url,
    active: shown.active,
    payload_version: shown.payload_version,
    events: shown.events,
    basic_auth_username: shown.basic_auth_username,
    basic_auth_password_set: shown.basic_auth_password_set,
    signing_secret_set: shown.signing_secret_set,
    created_at: endpoint ? formatTimestamp(endpoint.created_at, 'utc') : null,
    updated_at: endpoint ? formatTimestamp(endpoint.updated_at, 'utc') : null,
  };
}

/**
 * A problem of the endpoint rules (`field: message`) as the API reports body problems, naming its field; one that
 * concerns two fields together names none.
 */
function bodyProblem(text: string): Problem {
  const [, field = '', message = text] = /^([a-z_]+): (.*)$/s.exec(text) ?? [];
  return { in: 'body', name: field, message };
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
  if (problem) throw new ApiError('invalid_body', problem, {}, [bodyProblem(problem)]);
  const keyring = createKeyring(config.secrets.keys);
  return db.transaction(async (trx) => {
    // Locked so that two admins saving at once apply their changes one after the other.
    const current = await findEndpointSettingsForUpdate(trx, keyring);
    const result = applyEndpointChange(current, change, {
      urlPolicy: urlPolicyFor(config),
      cartLogic: config.platform.cartLogic,
    });
    if ('problems' in result) throw new ApiError('invalid_body', result.problems.join('; '), {}, result.problems.map(bodyProblem));
    return presentEndpoint(await saveEndpoint(trx, result.settings, now, keyring));
  });
}
