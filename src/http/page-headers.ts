/**
 * Headers of the HTML pages we serve (admin page, Swagger UI): scripts and styles only from this origin (no inline
 * script can run, so an injected tag does nothing), API calls only to this origin, no framing (clickjacking), no
 * referrer towards links that leave the page.
 */
export function pageHeaders({ styleSrc = "'self'" }: { styleSrc?: string } = {}): Record<string, string> {
  return {
    'Content-Security-Policy': [
      "default-src 'none'",
      "script-src 'self'",
      `style-src ${styleSrc}`,
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
  };
}
