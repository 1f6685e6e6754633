import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import net from 'node:net';
import { bareHost, isPrivateAddress, NOT_PUBLIC } from './subscriber-url';

/** Every address a host name resolves to (A and AAAA); tests inject a table instead of the real DNS. */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export type AddressCheck =
  | { ok: true; addresses: LookupAddress[] }
  /** The host resolves to at least one address it must not reach; `reason` names it. */
  | { ok: false; refused: true; reason: string }
  /** The host could not be resolved at all. */
  | { ok: false; refused: false; reason: string };

/**
 * Resolves a subscriber's host and checks every address. One address that is not global unicast refuses the whole
 * host (unless private addresses are allowed, in development): a name with a public and a private record could
 * otherwise be steered to the private one. A literal IP address is checked as it is, without DNS.
 */
export async function checkSubscriberHost(
  hostname: string,
  { resolve, allowPrivateAddresses }: { resolve: ResolveHost; allowPrivateAddresses: boolean },
): Promise<AddressCheck> {
  const host = bareHost(hostname);
  const family = net.isIP(host);
  let addresses: LookupAddress[];
  if (family !== 0) {
    addresses = [{ address: host, family }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      return { ok: false, refused: false, reason: `the host ${host} could not be resolved (${code})` };
    }
    if (addresses.length === 0) return { ok: false, refused: false, reason: `the host ${host} has no address` };
  }
  const forbidden = allowPrivateAddresses ? undefined : addresses.find(({ address }) => isPrivateAddress(address));
  if (forbidden) {
    const what = family === 0 ? `${host} resolves to ${forbidden.address}, which` : host;
    return { ok: false, refused: true, reason: `${what} is ${NOT_PUBLIC}` };
  }
  return { ok: true, addresses };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that answers with the addresses checkSubscriberHost checked, never asking the DNS
 * again: the socket goes to a checked address even if the DNS answers differently a moment later (DNS rebinding).
 * Node skips `lookup` for a literal IP host, which checkSubscriberHost checked as it is.
 */
export function pinnedLookup(addresses: LookupAddress[]) {
  return (_hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback): void => {
    if (lookupOptions.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  };
}
