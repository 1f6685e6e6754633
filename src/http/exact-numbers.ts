import { ApiError } from '../shared/errors';

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * `50.000000000000001` becomes the double 50 before any schema sees it, so a rule such as "at most two decimals"
 * would pass a number the caller did not send. A body is refused instead when one of its numbers does not survive
 * that conversion digit for digit (the double's shortest spelling is the same decimal), whatever the field: no
 * operation takes more than about 15 significant digits.
 *
 * A scan of the text JSON.parse has already accepted, not a second parser: a lossless JSON parser (lossless-json)
 * recurses per nesting level and overflowed the stack on the nesting bombs that JSON.parse takes.
 */
export function refuseNumbersThatLoseDigits(json: string): void {
  let inString = false;
  for (let i = 0; i < json.length; i += 1) {
    const char = json[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      NUMBER.lastIndex = i;
      const literal = NUMBER.exec(json)![0];
      refuseIfRounded(literal);
      i += literal.length - 1;
    }
  }
}

function refuseIfRounded(literal: string): void {
  const kept = String(Number(literal));
  if (kept === literal || canonicalDecimal(literal) === canonicalDecimal(kept)) return;
  const shown = literal.length > 40 ? `${literal.slice(0, 40)}…` : literal;
  throw new ApiError(
    'invalid_body',
    `The number ${shown} cannot be taken as written: a JSON number here keeps at most about 15 significant digits (it would become ${kept})`,
  );
}

/** A decimal literal as sign, significant digits and exponent (`1.50e1` and `15` alike); anything else as it is. */
function canonicalDecimal(literal: string): string {
  const parts = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!parts) return literal;
  const [, sign, whole, fraction = '', exponent = '0'] = parts;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  const significant = digits.replace(/0+$/, '');
  if (significant === '') return '0';
  return `${sign}${significant}e${BigInt(exponent) - BigInt(fraction.length) + BigInt(digits.length - significant.length)}`;
}
