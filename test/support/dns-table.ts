import net from 'node:net';
import type { ResolveHost } from '../../src/webhooks/subscriber-address';

/**
 * A resolver answering from a table instead of the DNS (there is no network here). A name maps to its addresses,
 * or to a function of the call count, to play a DNS server that changes its answer (rebinding). Unknown names fail
 * as the system resolver does. `calls` counts lookups per name.
 */
export function dnsTable(table: Record<string, string[] | ((call: number) => string[])>): ResolveHost & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const resolve = async (hostname: string) => {
    const call = (calls.get(hostname) ?? 0) + 1;
    calls.set(hostname, call);
    const entry = table[hostname.toLowerCase()];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const addresses = typeof entry === 'function' ? entry(call) : entry;
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };
  return Object.assign(resolve, { calls });
}

/** A public address for names the tests use as ordinary subscribers; nothing is ever sent to it. */
export const PUBLIC_ADDRESS = '93.184.215.14';
