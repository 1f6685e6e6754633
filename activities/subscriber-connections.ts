import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';

/**
 * How long a connection may lie idle before it is closed: below the 5 s that Node servers keep an idle connection,
 * and Node closes earlier where a subscriber announces less (`Keep-Alive: timeout=…`). A subscriber that closes
 * sooner without saying so costs one resend of the request on a new connection (postRequest).
 */
export const IDLE_CONNECTION_MS = 4_000;

/** Pools of connections kept per subscriber and checked address set; agents beyond this many are let go. */
const MAX_POOLS = 64;

/**
 * Kept-alive connections to subscribers, one pool per (scheme, host, port, checked addresses). Every POST checks the
 * host's addresses first; it reuses a connection only from the pool of exactly the addresses its own check gave, so a
 * connection made to an address checked earlier never carries a POST whose check came out differently (a name that
 * moved, an address no longer allowed: that POST is refused before any pool is asked).
 */
export class SubscriberConnections {
  private readonly pools = new Map<string, http.Agent>();

  agentFor(target: URL, addresses: LookupAddress[]): http.Agent {
    const key = [target.protocol, target.hostname, target.port, ...addresses.map(({ address }) => address).sort()].join('|');
    const agent = this.pools.get(key) ?? this.newAgent(target.protocol);
    // Most recently used last: the first is the one let go when there are too many.
    this.pools.delete(key);
    this.pools.set(key, agent);
    if (this.pools.size > MAX_POOLS) {
      // Not destroyed: a POST may still use it. Its idle connections close after IDLE_CONNECTION_MS.
      this.pools.delete(this.pools.keys().next().value as string);
    }
    return agent;
  }

  private newAgent(protocol: string): http.Agent {
    const options = { keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' as const };
    return protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  }
}
