import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The stack's throw-away certificate authority, made with openssl on the first start with TLS and kept in the data
 * folder: it signs the Temporal frontend's server certificate, the certificate its services present to each other,
 * and the client certificate with which the application and the namespace job authenticate (mTLS). Made again
 * when a certificate is missing or has less than a day left.
 */
export interface StackCertificates {
  dir: string;
  ca: string;
  frontend: { cert: string; key: string };
  internode: { cert: string; key: string };
  client: { cert: string; key: string };
  /** The name the frontend's certificate is issued to, which clients verify (TEMPORAL_TLS_SERVER_NAME). */
  serverName: string;
}

const VALID_DAYS = 30;
const RENEW_WITHIN_MS = 24 * 3600 * 1000;
export const FRONTEND_SERVER_NAME = 'localhost';

const openssl = (args: string[], cwd: string) => promisify(execFile)('openssl', args, { cwd });

/** A P-256 key and a certificate for it, signed by the CA, for the given names and uses. */
async function issue(dir: string, name: string, subjectAltName: string, extendedKeyUsage: string): Promise<void> {
  await openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`,
    '-out', `${name}.csr`, '-subj', `/CN=${name}`], dir);
  await writeFile(path.join(dir, `${name}.ext`), `subjectAltName=${subjectAltName}\nextendedKeyUsage=${extendedKeyUsage}\n`);
  await openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', `${name}.pem`, '-days', String(VALID_DAYS), '-extfile', `${name}.ext`], dir);
  await rm(path.join(dir, `${name}.csr`));
  await rm(path.join(dir, `${name}.ext`));
}

function layout(dir: string): StackCertificates {
  const pair = (name: string) => ({ cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) });
  return {
    dir,
    ca: path.join(dir, 'ca.pem'),
    frontend: pair('frontend'),
    internode: pair('internode'),
    client: pair('client'),
    serverName: FRONTEND_SERVER_NAME,
  };
}

function usable(certificates: StackCertificates): boolean {
  const files = [certificates.ca, certificates.frontend.cert, certificates.internode.cert, certificates.client.cert];
  return files.every((file) => {
    if (!existsSync(file)) return false;
    const validTo = Date.parse(new X509Certificate(readFileSync(file)).validTo);
    return validTo - Date.now() > RENEW_WITHIN_MS;
  });
}

export async function ensureCertificates(dir: string): Promise<StackCertificates> {
  const certificates = layout(dir);
  if (usable(certificates)) return certificates;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key',
    '-out', 'ca.pem', '-days', String(VALID_DAYS), '-subj', '/CN=donation-webhooks stack CA (throw-away)'], dir);
  const local = `DNS:${FRONTEND_SERVER_NAME},IP:127.0.0.1`;
  await issue(dir, 'frontend', local, 'serverAuth');
  // Presented by each Temporal service to the others, and by the worker service to the frontend as its client.
  await issue(dir, 'internode', local, 'serverAuth,clientAuth');
  await issue(dir, 'client', 'DNS:donation-webhooks', 'clientAuth');
  for (const name of ['ca', 'frontend', 'internode', 'client']) await chmod(path.join(dir, `${name}.key`), 0o600);
  return certificates;
}
