import { type PayloadVersion, versionNeedsCartLogic } from '../webhooks/payload-versions';
import { DEFAULT_EVENT_SELECTION, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhooks/event-types';
import { storedUrl, type UrlPolicy, urlProblem } from '../webhooks/subscriber-url';
import type { EndpointSettings } from './endpoint-store';

/** The rules of the endpoint's settings: a change merged into the current settings, and every problem with it. */

export function payloadVersionProblem(version: PayloadVersion, cartLogic: boolean): string | undefined {
  if (versionNeedsCartLogic(version) && !cartLogic) {
    return `payload_version: ${version} can only be chosen when the cart logic of the donation shop is switched on`;
  }
  return undefined;
}

/** The selection in the canonical order of event types, each once. */
export function normaliseEventSelection(events: readonly WebhookEventType[]): WebhookEventType[] {
  return WEBHOOK_EVENT_TYPES.filter((type) => events.includes(type));
}

/**
 * A change to the endpoint: an absent field keeps the current value (or takes the default on a new endpoint);
 * null clears an optional one. Credentials are write-only, so leaving them out must not erase them.
 */
export interface EndpointChange {
  url?: string;
  active?: boolean;
  payload_version?: PayloadVersion;
  events?: WebhookEventType[];
  basic_auth_username?: string | null;
  basic_auth_password?: string | null;
  signing_secret?: string | null;
}

export interface EndpointRules {
  urlPolicy: UrlPolicy;
  cartLogic: boolean;
}

export const NEW_ENDPOINT_DEFAULTS: Omit<EndpointSettings, 'url'> = {
  active: true,
  payload_version: 'v1',
  events: [...DEFAULT_EVENT_SELECTION],
  basic_auth_username: null,
  basic_auth_password: null,
  signing_secret: null,
};

/** Scheme, host and port as the URL parser normalises them (case, default port, IDN); undefined for no URL. */
function originOf(raw: string): string | undefined {
  try {
    return new URL(raw).origin;
  } catch {
    return undefined;
  }
}

export const CREDENTIALS_FOR_NEW_ORIGIN_PROBLEM =
  'basic_auth_password: required when the url moves to another origin (scheme, host or port), as the stored ' +
  'credentials were given for the old one: give the password for the new url, or null (with basic_auth_username ' +
  'null) to send none';

/**
 * Basic-auth credentials belong to the origin they were given for. A change that moves the URL to another origin
 * must say what to send there: leaving the password out would otherwise hand the old host's password to the new
 * one. Refused rather than cleared, so that no delivery silently starts to go out without its credentials.
 * The signing secret stays: it never travels, and a receiver that moves keeps verifying with it.
 */
function credentialsLeftBehind(current: EndpointSettings | undefined, change: EndpointChange): boolean {
  if (!current?.basic_auth_password || change.url === undefined || change.basic_auth_password !== undefined) return false;
  const target = originOf(change.url);
  return target !== undefined && target !== originOf(current.url);
}

/** Applies a change to the current settings (undefined: no endpoint yet); the settings, or every problem found. */
export function applyEndpointChange(
  current: EndpointSettings | undefined,
  change: EndpointChange,
  rules: EndpointRules,
): { settings: EndpointSettings } | { problems: string[] } {
  const given = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined)) as EndpointChange;
  const merged: Omit<EndpointSettings, 'url'> & { url?: string } = { ...(current ?? NEW_ENDPOINT_DEFAULTS), ...given };
  const problems: string[] = [];
  const { url } = merged;
  if (url === undefined) problems.push('url: required for a new endpoint');
  else {
    const problem = urlProblem(url, rules.urlPolicy);
    if (problem) problems.push(problem);
  }
  // Only choosing a version is checked: an endpoint keeps its version if the cart logic is switched off later.
  if (given.payload_version !== undefined && given.payload_version !== current?.payload_version) {
    const problem = payloadVersionProblem(given.payload_version, rules.cartLogic);
    if (problem) problems.push(problem);
  }
  if ((merged.basic_auth_username === null) !== (merged.basic_auth_password === null)) {
    problems.push('basic_auth_username and basic_auth_password: set both or neither');
  }
  if (credentialsLeftBehind(current, given)) problems.push(CREDENTIALS_FOR_NEW_ORIGIN_PROBLEM);
  if (url === undefined || problems.length > 0) return { problems };
  return { settings: { ...merged, url: storedUrl(url), events: normaliseEventSelection(merged.events) } };
}
