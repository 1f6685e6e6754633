import { BlockList, isIP } from 'node:net';

/** `a.b.c.d` or an IPv6 literal, optionally `/prefix`. */
const ENTRY = /^([^/]+)(?:\/([0-9]{1,3}))?$/;

/**
 * TRUST_PROXY as a list of addresses and CIDR ranges, each checked; `''` and `0` (the old default) trust none. A bare
 * count of hops, the old form, is refused: it believed X-Forwarded-For from whichever peer connected, so any process
 * that reached an API port directly could claim any client address (and with it a fresh login budget).
 */
export function parseTrustedProxies(value: string): string[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 1 && entries[0] === '0') return [];
  for (const entry of entries) {
    if (/^[0-9]+$/.test(entry)) {
      throw new Error(
        `TRUST_PROXY takes the addresses or CIDR ranges of the proxies in front of the API (TRUST_PROXY=172.30.0.10, ` +
          `TRUST_PROXY=10.0.0.0/8,fd00::/8), no longer a count of hops: ${entry} would believe X-Forwarded-For from any peer`,
      );
    }
    const match = ENTRY.exec(entry);
    // A zone (`fe80::1%eth0`) names an interface, which a peer's address never carries.
    const family = match && !match[1].includes('%') ? isIP(match[1]) : 0;
    const prefix = match?.[2] === undefined ? undefined : Number(match[2]);
    if (family === 0 || (prefix !== undefined && prefix > (family === 4 ? 32 : 128))) {
      throw new Error(`TRUST_PROXY: ${JSON.stringify(entry)} is not an IP address or CIDR range`);
    }
    if (prefix === 0) {
      throw new Error(`TRUST_PROXY: ${entry} is every address: it would believe X-Forwarded-For from any peer; name the proxies`);
    }
  }
  return entries;
}

/** The peers whose forwarding headers are believed. */
export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

/** A socket's address as written in X-Forwarded-For: an IPv4 peer of a dual-stack listener without its `::ffff:`. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export const isTrusted = (proxies: BlockList, address: string): boolean => {
  const family = isIP(address);
  return family !== 0 && proxies.check(address, family === 4 ? 'ipv4' : 'ipv6');
};

/**
 * The client's address behind a trusted peer: X-Forwarded-For read from the right (each proxy appends the address it
 * was connected from), past every trusted proxy, to the first address that is not one; what stands left of it is the
 * client's own claim and is not read. Every entry trusted: the leftmost; an entry that is no address: the hop right of it.
 */
export function forwardedClientAddress(proxies: BlockList, peer: string, forwardedFor: string | undefined): string {
  const chain = (forwardedFor ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  let client = peer;
  for (let i = chain.length - 1; i >= 0 && isTrusted(proxies, client); i -= 1) {
    const hop = plainAddress(chain[i]);
    // A trusted proxy writes addresses; anything else there is no address to count a client by.
    if (isIP(hop) === 0) break;
    client = hop;
  }
  return client;
}

