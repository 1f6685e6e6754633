/**
 * `Authorization: <scheme> <credentials>`, with the scheme lower-cased because schemes are case-insensitive
 * (RFC 9110 §11.1: `bearer` is `Bearer`); undefined unless the header is exactly one scheme and one credential.
 */
export function parseAuthorization(header: string): { scheme: string; credentials: string } | undefined {
  const [scheme, credentials, ...rest] = header.trim().split(/\s+/);
  if (!credentials || rest.length > 0) return undefined;
  return { scheme: scheme.toLowerCase(), credentials };
}
