import { ApiError } from '../shared/errors';
import { refuseNumbersThatLoseDigits } from './exact-numbers';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body's bytes as text, refused unless they are UTF-8 (RFC 8259 §8.1). Decoding with replacement characters, as
 * body parsers do, turns every invalid byte into U+FFFD: two transaction ids that differ in one invalid byte become the
 * same id, and the second payment is taken for a repetition of the first.
 */
export function utf8Text(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError('malformed_body', 'The body is not valid UTF-8; send JSON encoded as UTF-8');
  }
}

/** Only an object or an array: a scalar is no operation's body. */
const OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;

/**
 * A key that changes what an object inherits once the parsed body is copied or merged (`__proto__`, or `constructor`
 * holding `prototype`), with its path; undefined when there is none.
 */
interface Visit {
  node: unknown;
  key?: string;
  parent?: Visit;
}

const pathOf = (visit: Visit): string => {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.unshift(at.key);
  return keys.join('.');
};

const isObject = (value: unknown): value is object => value !== null && typeof value === 'object';

function forbiddenKey(value: unknown): string | undefined {
  // Iterative, and paths built only for a hit: a body nested a hundred thousand levels deep is valid JSON and must
  // neither overflow the stack nor spell out its path at every level.
  const pending: Visit[] = [{ node: value }];
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const node = visit.node as Record<string, unknown>;
    for (const key of Object.keys(node)) {
      const child = node[key];
      if (key === '__proto__' || (key === 'constructor' && isObject(child) && Object.hasOwn(child, 'prototype'))) {
        return pathOf({ node: child, key, parent: visit });
      }
      if (isObject(child)) pending.push({ node: child, key, parent: visit });
    }
  }
  return undefined;
}

/** Text in which neither key can be spelled, directly or with escapes: nearly every body, which is then not walked. */
const MAY_NAME_A_FORBIDDEN_KEY = /__proto__|constructor|\\u/;

/**
 * The JSON body as its operation receives it: an object or array, every number as exact as written, no key that
 * reaches an object's prototype.
 */
export function parseJsonBody(text: string): unknown {
  if (!OBJECT_OR_ARRAY.test(text)) throw new ApiError('malformed_json', 'Malformed JSON body');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError('malformed_json', 'Malformed JSON body');
  }
  refuseNumbersThatLoseDigits(text);
  const key = isObject(parsed) && MAY_NAME_A_FORBIDDEN_KEY.test(text) ? forbiddenKey(parsed) : undefined;
  if (key !== undefined) {
    throw new ApiError('forbidden_key', `The body has the key ${key}, which is refused: it would reach the prototype of the objects it is copied into`, {}, [
      { in: 'body', name: key, message: 'Key not accepted' },
    ]);
  }
  return parsed;
}
