// @peculiar/x509 resolves its ASN.1 classes through tsyringe, which needs the Reflect metadata API loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;

/** A certificate and its private key, both PEM, as files on disk would hold them. */
export interface PemPair {
  cert: string;
  key: string;
}

export interface CertificateRequest {
  commonName: string;
  /** `server`: DNS names and IP addresses to be valid for; `client`: for mTLS. */
  usage: 'server' | 'client';
  dnsNames?: string[];
  ipAddresses?: string[];
  notBefore?: Date;
  notAfter?: Date;
}

/** A throw-away certificate authority of a test: its own certificate, and the certificates it issues. */
export interface TestAuthority {
  cert: string;
  issue(request: CertificateRequest): Promise<PemPair>;
}

const newKeys = () => webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;

async function privateKeyPem(keys: CryptoKeyPair): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`;
}

let serial = 1;
const nextSerial = () => (serial++).toString(16).padStart(2, '0');

/**
 * Makes a CA (ECDSA P-256, valid from yesterday for a year), made in the process: no openssl, nothing written to disk.
 * The TLS tests of the Temporal connection make theirs, with a second one that nobody trusts.
 */
export async function createTestAuthority(name: string): Promise<TestAuthority> {
  const keys = await newKeys();
  const subject = `CN=${name}`;
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: subject,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 365 * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    cert: caCert.toString('pem'),
    async issue({ commonName, usage, dnsNames = [], ipAddresses = [], notBefore, notAfter }) {
      const leafKeys = await newKeys();
      const names = [...dnsNames.map((value) => ({ type: 'dns' as const, value })), ...ipAddresses.map((value) => ({ type: 'ip' as const, value }))];
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: nextSerial(),
        subject: `CN=${commonName}`,
        issuer: subject,
        notBefore: notBefore ?? new Date(Date.now() - DAY_MS),
        notAfter: notAfter ?? new Date(Date.now() + 30 * DAY_MS),
        signingAlgorithm: ALGORITHM,
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
          await x509.AuthorityKeyIdentifierExtension.create(caCert),
          ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
        ],
      });
      return { cert: cert.toString('pem'), key: await privateKeyPem(leafKeys) };
    },
  };
}
