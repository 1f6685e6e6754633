/*
 * What a failed connection to Temporal means for the settings: the gRPC stacks' TLS errors, in their own words, turned
 * into the setting to look at.
 */

/** What to change, for the TLS failures that both gRPC stacks (Rust core, grpc-js on OpenSSL) report in their own words. */
const TLS_FAILURES: Array<[RegExp, string]> = [
  [
    /UnknownIssuer|self[- ]signed certificate|unable to (get|verify) .*issuer|unable to verify the first certificate/i,
    "the server's certificate is not signed by a CA this service trusts: TEMPORAL_TLS_CA_FILE (or the system's roots when it is unset)",
  ],
  [
    /InvalidCertificate\(Expired|CERT_HAS_EXPIRED|certificate has expired/i,
    "the server's certificate has expired (or this machine's clock is wrong): renew it on the frontend",
  ],
  [
    /NotValidForName|ERR_TLS_CERT_ALTNAME_INVALID|does not match certificate/i,
    "the server's certificate is not valid for the name this service checks: the host of TEMPORAL_ADDRESS, or TEMPORAL_TLS_SERVER_NAME",
  ],
  [
    /CertificateRequired|certificate required/i,
    'the server requires a client certificate: TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE',
  ],
  [
    /BadCertificate|bad certificate|UnknownCA|unknown ca|CertificateExpired|certificate expired|CertificateRevoked/i,
    'the server refused the client certificate (TEMPORAL_TLS_CERT_FILE): not signed by a CA it trusts, expired or revoked',
  ],
  [
    /InvalidContentType|wrong version number|packet length too long|CorruptMessage|InvalidMessage/i,
    'the server speaks no TLS on this port: TEMPORAL_TLS and its settings are for a frontend with TLS',
  ],
];

/**
 * A connection the server closed at once. With TLS, that is how a frontend refuses a client certificate: in TLS 1.3
 * it checks the certificate after the client considers the handshake done, so the refusal often arrives as a closed
 * connection rather than as its alert. Without TLS, it is how a frontend with TLS answers a plain-text client.
 */
const CLOSED_AT_ONCE = /broken pipe|close_notify|UnexpectedEof|ECONNRESET|ConnectionReset|connection (closed|reset)|socket hang up/i;
const CLOSED_HINTS = {
  tls:
    'the server closed the connection during the TLS handshake, as a frontend does with a client certificate it does ' +
    'not accept: TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE (missing, or not signed by a CA it trusts)',
  plain: 'the server closed the connection at once, as a frontend with TLS does with a plain-text client: TEMPORAL_TLS and its settings',
};

/** The setting to look at when a connection to Temporal fails in a way TLS explains; undefined otherwise. */
export function explainTemporalConnectionFailure(message: string, { tls }: { tls: boolean }): string | undefined {
  const known = TLS_FAILURES.find(([pattern]) => pattern.test(message))?.[1];
  if (known !== undefined) return known;
  return CLOSED_AT_ONCE.test(message) ? CLOSED_HINTS[tls ? 'tls' : 'plain'] : undefined;
}
