import net from 'node:net';

/*
 * What a subscriber URL may be: https (plain http to this machine only in development), no credentials or fragment,
 * a public (global unicast) host unless development allows otherwise. Pure; the endpoint's rules check a URL as typed
 * with it, and the delivery checks the addresses a host resolves to (subscriber-address.ts).
 */

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
export function urlPolicyFor(config: { webhooks: { allowInsecureUrls: boolean } }): UrlPolicy {
  const { allowInsecureUrls } = config.webhooks;
  return { allowHttpToLoopback: allowInsecureUrls, allowPrivateAddresses: allowInsecureUrls };
}

const MAX_URL_LENGTH = 2048;

/**
 * The IANA IPv4 Special-Purpose Address Registry, every block (also those marked globally reachable: a webhook
 * subscriber has no business on AS112 or AMT anycast), plus multicast. Everything else in IPv4 is global unicast.
 */
const IPV4_SPECIAL_PURPOSE: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", 0.0.0.0
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata services (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (DS-Lite, PCP and TURN anycast, NAT64 discovery, …)
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.31.196.0', 24], // AS112-v4
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast, 6a44 relay anycast
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // direct delegation AS112 service
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, limited broadcast 255.255.255.255
];

/** IPv6 global unicast: the only block IANA allocates to the regional registries for the Internet. */
const IPV6_GLOBAL_UNICAST = ['2000::', 3] as const;

/**
 * The blocks of the IANA IPv6 Special-Purpose Address Registry inside 2000::/3. Those outside it are refused by the
 * allowlist already: ::/128, ::1/128, ::ffff:0:0/96 (IPv4-mapped), 64:ff9b::/96 and 64:ff9b:1::/48 (IPv4/IPv6
 * translation), 100::/64 (discard), 100:0:0:1::/64 (dummy prefix), 5f00::/16 (SRv6 SIDs), fc00::/7 (unique local,
 * AWS metadata fd00:ec2::254), fe80::/10 (link-local), fec0::/10 (old site-local), ff00::/8 (multicast).
 */
const IPV6_SPECIAL_PURPOSE: readonly (readonly [string, number])[] = [
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32, PCP/TURN/DNS-SD anycast, benchmarking, AMT, ORCHID, …
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds any IPv4 address
  ['2620:4f:8000::', 48], // direct delegation AS112 service
  ['3fff::', 20], // documentation
];

function blockListOf(blocks: readonly (readonly [string, number])[], family: 'ipv4' | 'ipv6'): net.BlockList {
  const list = new net.BlockList();
  for (const [address, prefix] of blocks) list.addSubnet(address, prefix, family);
  return list;
}

// Separate lists per family: a BlockList checks an IPv4-mapped IPv6 address against the IPv4 rules of its own list.
const ipv4SpecialPurpose = blockListOf(IPV4_SPECIAL_PURPOSE, 'ipv4');
const ipv6GlobalUnicast = blockListOf([IPV6_GLOBAL_UNICAST], 'ipv6');
const ipv6SpecialPurpose = blockListOf(IPV6_SPECIAL_PURPOSE, 'ipv6');

/**
 * True only for global unicast addresses: an IPv4 address outside every special-purpose block, or an IPv6 address
 * in 2000::/3 outside every special-purpose block. IPv6 forms that embed an IPv4 address (mapped, translated,
 * 6to4, Teredo) are not global unicast by this rule, whatever address they embed. An address with a zone id is
 * link-scoped by definition.
 */
function isGlobalUnicast(ip: string): boolean {
  if (ip.includes('%')) return false;
  switch (net.isIP(ip)) {
    case 4:
      return !ipv4SpecialPurpose.check(ip, 'ipv4');
    case 6:
      return ipv6GlobalUnicast.check(ip, 'ipv6') && !ipv6SpecialPurpose.check(ip, 'ipv6');
    default:
      return false;
  }
}

/** True for an IP address a production webhook must not reach: any address that is not global unicast. */
export function isPrivateAddress(ip: string): boolean {
  return net.isIP(ip) !== 0 && !isGlobalUnicast(ip);
}

export const NOT_PUBLIC = 'not a public (global unicast) address';
export const PRIVATE_ADDRESS_PROBLEM = 'url: must point to a public (global unicast) address';

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

/** Control characters, C0, DEL and C1: the URL parser drops tabs and line breaks anywhere and the rest at the ends. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/**
 * `scheme://` and then the host, as the URL is meant to be read. The WHATWG parser also takes `https:host`,
 * `https:/host` and `https:///host` for `https://host`, which other parsers read otherwise.
 */
const SCHEME_AND_HOST = /^ *[a-z][a-z0-9+.-]*:\/\/[^/]/i;

/**
 * The problem with a subscriber URL as typed, or undefined when it is acceptable (and then stored as its parsed,
 * normalised form: storedUrl). What the parser would silently change is refused rather than stored: the URL stored,
 * shown and requested is then the one the admin typed and saw. Only literal addresses are checked here; what a host
 * name resolves to is checked by `subscriber-address.ts`, at configuration and again at every delivery.
 */
export function urlProblem(raw: string, policy: UrlPolicy): string | undefined {
  if (raw.length > MAX_URL_LENGTH) return `url: at most ${MAX_URL_LENGTH} characters`;
  if (CONTROL_CHARACTER.test(raw)) return 'url: must not contain control characters (tab, line break, …)';
  // The parser reads a backslash as a slash in https URLs (`https://crm.example.org\@evil.example/`); others do not.
  if (raw.includes('\\')) return 'url: must not contain a backslash';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url: must be a complete URL such as https://crm.example.org/webhooks';
  }
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol === 'http:') {
    if (!(policy.allowHttpToLoopback && loopback)) return 'url: must use https';
  } else if (url.protocol !== 'https:') {
    return 'url: must use https';
  }
  if (!SCHEME_AND_HOST.test(raw)) return 'url: must be written as https:// and the host, such as https://crm.example.org/webhooks';
  // Any @ before the path is user info, also an empty one (`https://@host`, which the parser drops).
  if (raw.split('://', 2)[1].split(/[/?#]/, 1)[0].includes('@')) {
    return 'url: must not contain credentials; use basic_auth_username and basic_auth_password';
  }
  if (raw.includes('#')) return 'url: must not contain a fragment';
  // Port 0 cannot be listened on; Node would send to the scheme's default port instead.
  if (url.port === '0') return 'url: port 0 is not a port a subscriber can listen on';
  if (url.href.length > MAX_URL_LENGTH) return `url: at most ${MAX_URL_LENGTH} characters once normalised (${url.href.length})`;
  if (!policy.allowPrivateAddresses && (loopback || isPrivateAddress(bareHost(url.hostname)))) {
    return PRIVATE_ADDRESS_PROBLEM;
  }
  return undefined;
}

/**
 * The form a URL accepted by urlProblem is stored in: the WHATWG parser's `href` (scheme and host in lower case,
 * IDN as punycode, the default port dropped, an IP address in its canonical form, `/` for an empty path, spaces and
 * other characters outside the URL syntax percent-encoded). Deliveries, the admin page and the origin rule all read
 * this one string.
 */
export function storedUrl(raw: string): string {
  return new URL(raw).href;
}
