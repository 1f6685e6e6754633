import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync, type Stats, statSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import type { Config, TemporalTlsSettings } from '../config';

/*
 * The settings of every connection to Temporal, read from src/config.ts's Temporal part and the files it names, and
 * checked once, at start (src/temporal/connection.ts announces them and connects).
 */

/**
 * How every connection of the service to Temporal is made: the worker's NativeConnection, the clients' Connection
 * (relay, API, schedules) and those of the drills and benchmarks. Both SDK connections take these options as they
 * are. Holds the API key and the private key: never log it, log describeTemporalConnection() instead.
 */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
}

/** What the start-up line says about a connection besides its description; no secret in it. */
export interface TemporalConnectionFacts {
  address: string;
  tls: boolean;
  /** mTLS, API key, both, or neither (TLS with the server's certificate only). */
  auth: Array<'mTLS' | 'API key'>;
  serverName?: string;
  /** When the client certificate stops being valid (mTLS). */
  clientCertificateExpires?: Date;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Far more than any file these settings name holds (a bundle of every public root CA is about 220 KB): a larger one
 * is the wrong file, and reading it whole would only cost the start its memory.
 */
export const MAX_SETTING_FILE_BYTES = 1024 * 1024;

const invalid = (setting: string, problem: string) => new Error(`Invalid configuration: ${setting}: ${problem}`);

/**
 * The file's bytes. Only a regular file of at most MAX_SETTING_FILE_BYTES is read: a path that leads to a device
 * (`/dev/zero`, `/dev/stdin`) or a FIFO would never end, and the start would hang instead of naming the setting.
 */
function readSetting(setting: string, file: string): Buffer {
  const unreadable = (err: unknown) => invalid(setting, `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch (err) {
    throw unreadable(err);
  }
  if (!stats.isFile()) throw invalid(setting, `${file} is not a regular file (a folder, a device, a FIFO or a socket)`);
  if (stats.size > MAX_SETTING_FILE_BYTES) {
    throw invalid(setting, `${file} has ${stats.size} bytes, more than the ${MAX_SETTING_FILE_BYTES} a PEM file of certificates or a key has`);
  }
  try {
    return readFileSync(file);
  } catch (err) {
    throw unreadable(err);
  }
}

/** The file's mode when users other than its owner may read or write it (the private key's file); undefined otherwise. */
export function looseMode(file: string): number | undefined {
  const mode = statSync(file).mode & 0o777;
  return (mode & 0o077) === 0 ? undefined : mode;
}

/**
 * The certificates of a PEM file, first one first, and the PEM to hand to the SDK: those certificates alone, each on
 * lines of its own. Both of the SDK's TLS stacks read only the first of two blocks glued on one line
 * (`-----END CERTIFICATE----------BEGIN CERTIFICATE-----`, as `cat` makes of files without a final line break), so
 * a CA bundle would silently lose the CA that signed the frontend, and a client certificate its intermediates.
 * An error naming the setting when there is no certificate or one is broken.
 */
function readCertificates(setting: string, file: string): { pem: Buffer; certificates: X509Certificate[] } {
  const blocks = readSetting(setting, file).toString('utf8').match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw invalid(setting, `${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  const certificates = blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw invalid(setting, `certificate ${index + 1} in ${file} cannot be read (${(err as Error).message})`);
    }
  });
  return { pem: Buffer.from(`${blocks.join('\n')}\n`), certificates };
}

function readPrivateKey(setting: string, file: string): { pem: Buffer; key: KeyObject } {
  const pem = readSetting(setting, file);
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem.toString('utf8'))) {
    throw invalid(setting, `${file} holds no PEM private key (-----BEGIN PRIVATE KEY-----)`);
  }
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem.toString('utf8'))) {
    // The SDK takes no passphrase; the key file is protected by its permissions instead.
    throw invalid(setting, `the private key in ${file} is encrypted; store it unencrypted (openssl pkey -in <file> -out <file>) and readable by this service only`);
  }
  try {
    return { pem, key: createPrivateKey(pem) };
  } catch (err) {
    // Node's messages name the format problem, never the key's bytes.
    throw invalid(setting, `the private key in ${file} cannot be read (${(err as Error).message})`);
  }
}

/**
 * The client certificate and its key, checked as the frontend would check them: a pair, and valid now. An expired
 * certificate would otherwise surface as a TLS alert from the server ("bad certificate") that says neither which file
 * nor since when.
 */
function readClientPair(certFile: string, keyFile: string, now: Date): { crt: Buffer; key: Buffer; expires: Date } {
  const { pem: crt, certificates } = readCertificates('TEMPORAL_TLS_CERT_FILE', certFile);
  const [leaf] = certificates;
  const { pem: key, key: privateKey } = readPrivateKey('TEMPORAL_TLS_KEY_FILE', keyFile);
  if (!leaf.checkPrivateKey(privateKey)) {
    throw invalid('TEMPORAL_TLS_KEY_FILE', `the key in ${keyFile} is not the private key of the certificate in ${certFile} (TEMPORAL_TLS_CERT_FILE)`);
  }
  const validFrom = new Date(leaf.validFrom);
  const expires = new Date(leaf.validTo);
  if (expires <= now) {
    throw invalid('TEMPORAL_TLS_CERT_FILE', `the client certificate in ${certFile} (${leaf.subject.replace(/\n/g, ', ')}) expired on ${expires.toISOString()}`);
  }
  if (validFrom > now) {
    throw invalid('TEMPORAL_TLS_CERT_FILE', `the client certificate in ${certFile} is not valid before ${validFrom.toISOString()}`);
  }
  return { crt, key, expires };
}

function tlsConfig(settings: TemporalTlsSettings, now: Date): { tls: TLSConfig; expires?: Date } {
  const tls: TLSConfig = {};
  if (settings.serverName !== undefined) tls.serverNameOverride = settings.serverName;
  if (settings.caFile !== undefined) tls.serverRootCACertificate = readCertificates('TEMPORAL_TLS_CA_FILE', settings.caFile).pem;
  if (settings.certFile === undefined || settings.keyFile === undefined) return { tls };
  const { crt, key, expires } = readClientPair(settings.certFile, settings.keyFile, now);
  tls.clientCertPair = { crt, key };
  return { tls, expires };
}

/**
 * The connection options for `address` from the Temporal settings of src/config.ts: the files are read and checked
 * here, once, at start, so that a bad file is a start-up error naming its setting. A certificate replaced on disk is
 * read at the next start.
 */
export function temporalConnection(
  address: string,
  { tls: settings, apiKey }: Pick<Config['temporal'], 'tls' | 'apiKey'>,
  now = new Date(),
): { options: TemporalConnectionOptions; facts: TemporalConnectionFacts } {
  const facts: TemporalConnectionFacts = { address, tls: settings !== undefined, auth: [] };
  if (settings === undefined) return { options: { address }, facts };
  const { tls, expires } = tlsConfig(settings, now);
  if (tls.clientCertPair) facts.auth.push('mTLS');
  if (apiKey !== undefined) facts.auth.push('API key');
  facts.serverName = settings.serverName;
  facts.clientCertificateExpires = expires;
  return { options: { address, tls, ...(apiKey === undefined ? {} : { apiKey }) }, facts };
}
