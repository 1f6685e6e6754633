import net from 'node:net';
import type { Config } from '../config';
import type { PayloadVersion } from '../db/models';
import { DEFAULT_EVENT_SELECTION, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './event-types';
import type { EndpointSettings } from './endpoint-store';
import { versionNeedsCartLogic } from './payload-versions';

export interface UrlPolicy {
  /** Development only: plain http to this machine (a local test subscriber). */
  allowHttpToLoopback: boolean;
  /** Development only: subscribers on loopback, private, link-local or other non-public addresses. */
  allowPrivateAddresses: boolean;
}

/**
 * Both relaxations follow the one explicit setting ALLOW_INSECURE_WEBHOOK_URLS, which is on by default outside
 * production and off in production: a production instance never sends to its own network unless told to.
 */
export function urlPolicyFor(config: Config): UrlPolicy {
  const { allowInsecureUrls } = config.webhooks;
  return { allowHttpToLoopback: allowInsecureUrls, allowPrivateAddresses: allowInsecureUrls };
}

const MAX_URL_LENGTH = 2048;

/** Addresses a webhook must never reach in production: this machine, its networks, and the cloud's metadata. */
const nonPublicRanges = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  nonPublicRanges.addSubnet(address, prefix, 'ipv4');
}
for (const [address, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible (::a.b.c.d)
  ['64:ff9b::', 96], // NAT64: may embed any IPv4 address
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2002::', 16], // 6to4: may embed any IPv4 address
  ['fc00::', 7], // unique local, AWS metadata (fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  nonPublicRanges.addSubnet(address, prefix, 'ipv6');
}

/**
 * True for IP addresses a production webhook must not reach: loopback, private, link-local, metadata, CGNAT,
 * multicast, reserved and the IPv6 forms that embed an IPv4 address (IPv4-mapped ones are checked as IPv4).
 */
export function isPrivateAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 0) return false;
  return nonPublicRanges.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

export const PRIVATE_ADDRESS_PROBLEM = 'url: must not point to a private, loopback or link-local address';

export function bareHost(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/** localhost, 127.0.0.0/8 or ::1, as the host part of a URL (IPv6 in brackets or not). */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname).toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '::1') return true;
  return net.isIPv4(host) && host.startsWith('127.');
}

/**
 * The problem with a subscriber URL, or undefined when it is acceptable. Only literal addresses are checked here;
 * what a host name resolves to is checked by `subscriber-address.ts`, at configuration and again at every delivery.
 */
export function urlProblem(raw: string, policy: UrlPolicy): string | undefined {
  if (raw.length > MAX_URL_LENGTH) return `url: at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url: must be a complete URL such as https://crm.example.org/webhooks';
  }
  if (url.username || url.password) return 'url: must not contain credentials; use basic_auth_username and basic_auth_password';
  if (url.hash) return 'url: must not contain a fragment';
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol === 'http:') {
    if (!(policy.allowHttpToLoopback && loopback)) return 'url: must use https';
  } else if (url.protocol !== 'https:') {
    return 'url: must use https';
  }
  if (!policy.allowPrivateAddresses && (loopback || isPrivateAddress(bareHost(url.hostname)))) {
    return PRIVATE_ADDRESS_PROBLEM;
  }
  return undefined;
}

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
  if (url === undefined || problems.length > 0) return { problems };
  return { settings: { ...merged, url, events: normaliseEventSelection(merged.events) } };
}
