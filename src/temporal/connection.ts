import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { explainTemporalConnectionFailure } from './connection-failures';
import { looseMode, type TemporalConnectionFacts, type TemporalConnectionOptions, temporalConnection } from './connection-settings';

/** Opening the connection settings with their start-up line and warnings, and the worker's connection. */

const DAY_MS = 24 * 60 * 60 * 1000;
/** A client certificate closer than this to its end is announced at every start. */
const EXPIRY_WARNING_DAYS = 14;

/** "Temporal: host:port, namespace x, TLS on (mTLS)": the start-up line's words; never a key. */
export function describeTemporalConnection(facts: TemporalConnectionFacts, namespace: string): string {
  const auth = facts.auth.length > 0 ? ` (${facts.auth.join(', ')})` : '';
  const name = facts.serverName === undefined ? '' : `, server name ${facts.serverName}`;
  return `Temporal: ${facts.address}, namespace ${namespace}, TLS ${facts.tls ? `on${auth}${name}` : 'off'}`;
}

/**
 * The options every connection of this process is made with, for the Temporal at `address` (TEMPORAL_ADDRESS or the
 * embedded dev server), announced in one start-up line: where, which namespace, how it is secured; never a key.
 */
export function openTemporalSettings(address: string, temporal: Config['temporal'], log: Logger, now = new Date()): TemporalConnectionOptions {
  const { options, facts } = temporalConnection(address, temporal, now);
  log.info({ temporal: { ...facts, namespace: temporal.namespace } }, describeTemporalConnection(facts, temporal.namespace));
  const expires = facts.clientCertificateExpires;
  if (expires !== undefined && expires.getTime() - now.getTime() < EXPIRY_WARNING_DAYS * DAY_MS) {
    // The frontend refuses the certificate from then on, at the latest when the worker next reconnects.
    log.warn({ clientCertificateExpires: expires }, `the Temporal client certificate (TEMPORAL_TLS_CERT_FILE) expires on ${expires.toISOString()}; renew it and restart`);
  }
  const keyFileMode = temporal.tls?.keyFile === undefined ? undefined : looseMode(temporal.tls.keyFile);
  if (keyFileMode !== undefined) {
    // A warning, not a refusal: a mounted secret (Kubernetes' default mode 0644) may be readable by this container only.
    const mode = keyFileMode.toString(8).padStart(4, '0');
    log.warn({ keyFileMode: mode }, `the Temporal client key (TEMPORAL_TLS_KEY_FILE) has mode ${mode}: other users of this machine may read it; make it 0600 or 0400, owned by the user this service runs as`);
  }
  return options;
}

/**
 * The worker's connection. It connects at once (unlike the clients', which connect on first use), so a connection
 * refused for TLS reasons fails the start with the setting to look at.
 */
export async function connectNativeTemporal(options: TemporalConnectionOptions): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(options);
  } catch (err) {
    const message = (err as Error).message;
    const explained = explainTemporalConnectionFailure(message, { tls: options.tls !== undefined });
    throw new Error(`Temporal at ${options.address} could not be reached${explained ? `: ${explained}` : ''} (${message})`, { cause: err });
  }
}
