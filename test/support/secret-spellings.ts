/**
 * Every spelling in which a subscriber that echoes our request might send a credential back, by name (for failure
 * messages): the forms docs/admin.md promises never to show ("The endpoint's credentials").
 */
export function spellingsOf(secret: string): Record<string, string> {
  const utf8 = Buffer.from(secret, 'utf8');
  const jsonAscii = JSON.stringify(secret)
    .slice(1, -1)
    .replace(/[^\x20-\x7e]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return {
    'as sent': secret,
    'upper case': secret.toUpperCase(),
    'lower case': secret.toLowerCase(),
    'JSON-escaped': JSON.stringify(secret).slice(1, -1),
    'JSON-escaped, ASCII only (Python)': jsonAscii,
    'JSON-escaped, upper-case hex and \\/ (PHP)': jsonAscii.replace(/\\u([0-9a-f]{4})/g, (_, hex: string) => `\\u${hex.toUpperCase()}`).replace(/\//g, '\\/'),
    'URL-encoded, %20': encodeURIComponent(secret),
    'URL-encoded, lower-case hex': encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    'form-encoded, +': new URLSearchParams({ x: secret }).toString().slice(2),
    'every byte percent-encoded': [...utf8].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`).join(''),
    'URL-encoded upper case': encodeURIComponent(secret.toUpperCase()),
    'HTML entities': secret.replace(/[&"<>']/g, (character) => ({ '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;', "'": '&#39;' })[character]!),
    'HTML numeric entities': Array.from(secret, (character) => `&#${character.codePointAt(0)};`).join(''),
    base64: utf8.toString('base64'),
    'base64 without padding': utf8.toString('base64').replace(/=+$/, ''),
    base64url: utf8.toString('base64url'),
  };
}
