/**
 * Cutting our own credentials out of a subscriber's answer before it is stored and shown to staff, in whatever
 * common spelling the subscriber echoes them: as sent, in another case, percent-encoded (`%20` or `+` for a space),
 * JSON-escaped (`\u00e4`, `\"`, `\/`), as HTML entities (`&#228;`, `&quot;`), and in base64 (alone or inside a longer
 * base64 text), each character in any of these forms.
 *
 * How: the answer is read twice, as it stands and with one layer of those encodings decoded, each time into a
 * "view" of case-folded UTF-16 units that remembers where every unit came from in the answer; each secret and its
 * base64 is looked for in both views with indexOf, and every range found is replaced in the answer (in a cut answer
 * also the start of a secret at its end: startAtEnd). One regular expression for every spelling was tried first: at
 * 10–30 ms per attempt to build and run it cost more than the rest of a delivery.
 */

const REDACTED = '[redacted]';

/** Secrets shorter than this are not searched for: redacting every "a" would garble any answer. */
const MIN_REDACTED_LENGTH = 6;

/**
 * Case, and space against `+` (form encoding writes a space as `+`): compared after folding, `Ä` equals `ä` and `+`
 * equals a space. Per UTF-16 unit, so that folding keeps every unit where it is (a unit whose lower case is longer
 * stays as it is).
 */
function folded(text: string): string {
  const lower = text.toLowerCase();
  const unitByUnit = () =>
    Array.from({ length: text.length }, (_, index) => {
      const unit = text[index].toLowerCase();
      return unit.length === 1 ? unit : text[index];
    }).join('');
  return (lower.length === text.length ? lower : unitByUnit()).replaceAll('+', ' ');
}

/**
 * Folded UTF-16 units, each with the range of the answer it was read from; without ranges, unit i is character i of
 * the answer.
 */
interface View {
  units: string;
  ranges?: { starts: Int32Array; ends: Int32Array };
}

/** Builds a decoded view; decoding never lengthens, so a view has at most as many units as the answer characters. */
class ViewBuilder {
  private readonly pieces: string[] = [];
  private length = 0;
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;

  constructor(capacity: number) {
    this.starts = new Int32Array(capacity);
    this.ends = new Int32Array(capacity);
  }

  /** text[from, to) as it stands. */
  addPlain(text: string, from: number, to: number): void {
    this.pieces.push(text.slice(from, to));
    for (let index = from; index < to; index++) {
      this.starts[this.length] = index;
      this.ends[this.length++] = index + 1;
    }
  }

  /** `decoded` (one character, maybe two units) was read from text[start, end). */
  add(decoded: string, start: number, end: number): void {
    this.pieces.push(decoded);
    for (let k = 0; k < decoded.length; k++) {
      // A surrogate pair decoded from one escape: the whole range goes with its first unit.
      this.starts[this.length] = k === 0 ? start : end;
      this.ends[this.length++] = end;
    }
  }

  build(): View {
    return { units: folded(this.pieces.join('')), ranges: { starts: this.starts, ends: this.ends } };
  }
}

const PERCENT_RUN = /(?:%[0-9a-f]{2})+/iy;
const JSON_UNICODE = /\\u([0-9a-f]{4})/iy;
const JSON_SHORT: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', "'": "'", b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HTML_NUMERIC = /&#(?:x0*([0-9a-f]{1,6})|0*([0-9]{1,7}));/iy;
const HTML_NAMED = /&(amp|quot|lt|gt|apos);/iy;
const HTML_NAMES: Record<string, string> = { amp: '&', quot: '"', lt: '<', gt: '>', apos: "'" };

/** The UTF-8 sequence length a lead byte announces; 0 for a byte that cannot lead one. */
function sequenceLength(byte: number): number {
  if (byte < 0x80) return 1;
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  return byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
}

/** Adds the characters of a run of `%XX` at `start`: valid UTF-8 decoded, any other byte as the three characters it is. */
function addPercentRun(view: ViewBuilder, text: string, start: number, run: string): void {
  const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
  let index = 0;
  while (index < bytes.length) {
    const length = sequenceLength(bytes[index]);
    const sequence = bytes.subarray(index, index + length);
    const valid = length > 0 && sequence.length === length && sequence.subarray(1).every((byte) => byte >= 0x80 && byte <= 0xbf);
    const from = start + index * 3;
    if (valid) {
      view.add(sequence.toString('utf8'), from, from + length * 3);
      index += length;
    } else {
      view.addPlain(text, from, from + 3);
      index += 1;
    }
  }
}

function matchAt(pattern: RegExp, text: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(text);
}

/** A JSON escape or an HTML entity at `index`: the character it stands for and how long it is. */
function escapeAt(text: string, index: number): { decoded: string; length: number } | undefined {
  if (text[index] === '\\') {
    const unicode = matchAt(JSON_UNICODE, text, index);
    if (unicode) return { decoded: String.fromCharCode(parseInt(unicode[1], 16)), length: unicode[0].length };
    const next = text[index + 1];
    if (next !== undefined && Object.hasOwn(JSON_SHORT, next)) return { decoded: JSON_SHORT[next], length: 2 };
  } else if (text[index] === '&') {
    const numeric = matchAt(HTML_NUMERIC, text, index);
    const codePoint = numeric && (numeric[1] === undefined ? parseInt(numeric[2], 10) : parseInt(numeric[1], 16));
    if (numeric && codePoint !== null && codePoint <= 0x10ffff) return { decoded: String.fromCodePoint(codePoint), length: numeric[0].length };
    const named = matchAt(HTML_NAMED, text, index);
    if (named) return { decoded: HTML_NAMES[named[1].toLowerCase()], length: named[0].length };
  }
  return undefined;
}

const ENCODED = /[%\\&]/g;

/** The answer with one layer of percent, JSON and HTML encoding read back. */
function decodedView(text: string): View {
  const view = new ViewBuilder(text.length);
  let index = 0;
  while (index < text.length) {
    ENCODED.lastIndex = index;
    const next = ENCODED.exec(text)?.index ?? text.length;
    view.addPlain(text, index, next);
    if (next === text.length) break;
    const percent = text[next] === '%' ? matchAt(PERCENT_RUN, text, next) : null;
    const escape = percent ? undefined : escapeAt(text, next);
    if (percent) addPercentRun(view, text, next, percent[0]);
    else if (escape) view.add(escape.decoded, next, next + escape.length);
    else view.addPlain(text, next, next + 1);
    index = next + (percent ? percent[0].length : (escape?.length ?? 1));
  }
  return view.build();
}

/**
 * The secret's base64, and the base64 characters that its bytes decide wherever they sit in a base64 text (at each of
 * the three offsets a byte string can have against base64's 3-byte groups), in the standard and the URL-safe
 * alphabet: so the secret is found in `base64(password)` as in the base64 of a whole echoed request.
 */
export function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores = [0, 1, 2].map((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    return encoded.slice(Math.ceil((offset * 8) / 6), Math.floor(((offset + bytes.length) * 8) / 6));
  });
  // The secret's own base64 whole, with and without padding, so that no character of it is left beside the cut.
  const whole = bytes.toString('base64');
  const forms = [whole, whole.replace(/=+$/, ''), ...cores];
  return forms.flatMap((form) => [form, form.replace(/\+/g, '-').replace(/\//g, '_')]);
}

/**
 * The spellings of a binary key (the signing key) that a subscriber's tooling prints: base64 and base64url, with and
 * without padding (the padded one too, so that no `=` is left beside the cut), and hex. Case does not matter (the
 * views compare folded), so hex in capitals is found as well.
 */
export function keySpellings(key: Buffer): string[] {
  const base64 = key.toString('base64');
  const base64url = key.toString('base64url');
  return [...new Set([base64, base64.replace(/=+$/, ''), base64url, base64url.padEnd(base64.length, '='), key.toString('hex')])];
}

/** Where in the answer each occurrence of a needle in the view came from. */
function rangesOf({ units, ranges }: View, needle: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (let at = units.indexOf(needle); at !== -1; at = units.indexOf(needle, at + 1)) {
    const last = at + needle.length - 1;
    found.push(ranges ? [ranges.starts[at], ranges.ends[last]] : [at, last + 1]);
  }
  return found;
}

/**
 * A cut text's end that may be the start of a secret: shorter starts tell too little to be worth the garbling (a
 * cut answer ending in "a" would end in [redacted] whenever a secret starts with "a").
 */
const MIN_CUT_START = 3;

/** The longest escape or entity a view decodes (`&#1114111;`), less one: what a cut can leave undecoded at the end. */
const LONGEST_PARTIAL_ESCAPE = 9;

/**
 * Where the answer's end holds the start of the needle (the longest such start, MIN_CUT_START units or more, perhaps
 * followed by the part of an escape the cut left, `%4` or `\u00`), to the end of the answer: what is left of a
 * secret that the cut of a stored answer went through.
 */
function startAtEnd({ units, ranges }: View, needle: string, textLength: number): Array<[number, number]> {
  for (let end = units.length; end >= Math.max(0, units.length - LONGEST_PARTIAL_ESCAPE); end--) {
    for (let length = Math.min(needle.length - 1, end); length >= MIN_CUT_START; length--) {
      if (units.startsWith(needle.slice(0, length), end - length)) {
        const at = end - length;
        return [[ranges ? ranges.starts[at] : at, textLength]];
      }
    }
  }
  return [];
}

/** `text` with every range replaced by REDACTED once (overlapping and touching ranges merged). */
function replaceRanges(text: string, ranges: Array<[number, number]>): string {
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = '';
  let position = 0;
  let [start, end] = ranges[0];
  for (const [nextStart, nextEnd] of [...ranges.slice(1), [Infinity, Infinity] as [number, number]]) {
    if (nextStart <= end) {
      end = Math.max(end, nextEnd);
      continue;
    }
    out += text.slice(position, start) + REDACTED;
    position = end;
    [start, end] = [nextStart, nextEnd];
  }
  return out + text.slice(position);
}

declare const needlesMadeHere: unique symbol;

/**
 * What redaction looks for, made by redactionNeedles alone: the raw secrets have the same shape, but would be found
 * only as written (not in another case, nor in base64), so they do not type-check here.
 */
export type RedactionNeedles = readonly string[] & { readonly [needlesMadeHere]: true };

/** The secrets (6 characters or more) and their base64, as the views compare them. */
export function redactionNeedles(secrets: readonly string[]): RedactionNeedles {
  const needles = secrets.filter((secret) => secret.length >= MIN_REDACTED_LENGTH).flatMap((secret) => [secret, ...base64Forms(secret)]);
  return [...new Set(needles.map(folded))] as unknown as RedactionNeedles;
}

/**
 * `text` with every spelling of the secrets' needles replaced by REDACTED; with `cut` (the text is the start of a
 * longer one), also what it ends with of a needle's start.
 */
export function redactNeedles(text: string, needles: RedactionNeedles, { cut = false } = {}): string {
  if (needles.length === 0 || (text.length < MIN_REDACTED_LENGTH && !cut)) return text;
  // The answer as it stands (a secret may itself hold `%41` or `\n`), and decoded where it holds anything to decode.
  const views: View[] = [{ units: folded(text) }];
  if (/[%\\&]/.test(text)) views.push(decodedView(text));
  const found = (view: View, needle: string) => [...rangesOf(view, needle), ...(cut ? startAtEnd(view, needle, text.length) : [])];
  return replaceRanges(text, needles.flatMap((needle) => views.flatMap((view) => found(view, needle))));
}
