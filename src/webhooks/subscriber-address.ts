import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import net from 'node:net';
import { bareHost, isPrivateAddress, NOT_PUBLIC } from './endpoint-rules';

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
    return {
      ok: false,
      refused: true,
      reason: `${host} resolves to ${forbidden.address}, which is ${NOT_PUBLIC}`,
    };
  }
  return { ok: true, addresses };
}

/** Marks a connection refused by the address check, so the caller can report it as "not sent". */
export class SubscriberAddressRefused extends Error {
  readonly code = 'ESUBSCRIBERADDRESS';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that resolves once, checks every address, and hands the socket exactly the addresses
 * it checked. The connection therefore goes to a checked address even if the DNS answers differently a moment later
 * (DNS rebinding). Node skips `lookup` for a literal IP host, so the caller checks those itself.
 */
export function checkedLookup(options: { resolve: ResolveHost; allowPrivateAddresses: boolean }) {
  return (hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback): void => {
    checkSubscriberHost(hostname, options).then(
      (check) => {
        if (!check.ok) {
          const err: NodeJS.ErrnoException = check.refused
            ? new SubscriberAddressRefused(check.reason)
            : Object.assign(new Error(check.reason), { code: 'ENOTFOUND' });
          callback(err, lookupOptions.all ? [] : '', undefined);
          return;
        }
        if (lookupOptions.all) callback(null, check.addresses);
        else callback(null, check.addresses[0].address, check.addresses[0].family);
      },
      (err: Error) => callback(err, lookupOptions.all ? [] : '', undefined),
    );
  };
}
