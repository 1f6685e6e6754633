/**
 * Why a configured secret is too easy to guess, or undefined when nothing gives it away. Generated secrets
 * (`openssl rand -hex 32`, as .env.example says) pass easily; what this refuses is a value typed by hand that only
 * meets the length: one character repeated, a short word repeated (`changemechangeme…`), a handful of characters.
 * It cannot prove a secret random; it catches the placeholders that reach production.
 */
export function secretWeakness(secret: string): string | undefined {
  // Code units: secrets are ASCII in practice, and a surrogate half counts as a character like any other.
  const characters = secret.split('');
  if (new Set(characters).size < MIN_DISTINCT_CHARACTERS) return `uses fewer than ${MIN_DISTINCT_CHARACTERS} different characters`;
  const period = shortestPeriod(characters);
  if (period <= characters.length / 2) return `repeats a string of ${period} characters`;
  return undefined;
}

/** The same for a key given as 32 bytes: a random key has about 31 different bytes; fewer than 16 is no accident. */
export function keyWeakness(key: Buffer): string | undefined {
  return new Set(key).size < MIN_DISTINCT_KEY_BYTES ? `has fewer than ${MIN_DISTINCT_KEY_BYTES} different bytes` : undefined;
}

// Low enough that random tokens from small alphabets pass (16 hex digits have fewer than 5 different ones with a
// chance below one in a million, 16 decimal digits about one in 10,000); placeholders made of a few characters fail,
// and a word repeated fails by its period.
const MIN_DISTINCT_CHARACTERS = 5;
const MIN_DISTINCT_KEY_BYTES = 16;

/** The smallest p such that the text is a prefix of its first p characters repeated (its length when none is). */
function shortestPeriod(characters: string[]): number {
  // Knuth–Morris–Pratt failure function: length minus the longest proper border.
  const border = new Array<number>(characters.length).fill(0);
  for (let i = 1, k = 0; i < characters.length; i++) {
    while (k > 0 && characters[i] !== characters[k]) k = border[k - 1];
    if (characters[i] === characters[k]) k++;
    border[i] = k;
  }
  return characters.length - (border[characters.length - 1] ?? 0);
}
