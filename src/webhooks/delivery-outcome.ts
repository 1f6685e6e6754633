import type { AttemptOutcome } from '../delivery-rules/delivery-status';
import { type RedactionNeedles, redactNeedles } from './secret-redaction';

/** At most this much of a subscriber's answer is read and stored, whatever it sends. */
export const RESPONSE_BODY_LIMIT_BYTES = 16 * 1024;

const ERROR_TEXT_LIMIT = 1000;
/** What `bounded` ends a cut error text with. */
const CUT_MARK = '…';

/** What happened on the wire during one attempt, before any judgement. */
export type HttpExchange =
  /**
   * A status line arrived in time; `body` holds at most RESPONSE_BODY_LIMIT_BYTES of what followed, `complete` says
   * whether that is the whole body (not cut by the limit, the deadline or a connection that broke off).
   */
  | { kind: 'response'; status: number; location?: string; body: Uint8Array; complete: boolean }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'connection-error'; message: string }
  /** Nothing was sent, for a reason on our side (endpoint switched off, unusable URL). */
  | { kind: 'not-sent'; reason: string };

export interface DeliveryOutcome {
  outcome: AttemptOutcome;
  responseCode: number | null;
  responseBody: string | null;
  error: string | null;
}

const bounded = (text: string, limit = ERROR_TEXT_LIMIT) => (text.length > limit ? `${text.slice(0, limit)}${CUT_MARK}` : text);

/**
 * The stored form of a response body: the first 16 KiB decoded as UTF-8, invalid sequences replaced (a subscriber
 * may answer with anything), and NUL characters replaced because Postgres text cannot hold them.
 */
export function storableResponseBody(bytes: Uint8Array): string {
  const limited = bytes.subarray(0, RESPONSE_BODY_LIMIT_BYTES);
  // oxlint-disable-next-line no-control-regex -- NUL is the character Postgres text cannot hold
  return new TextDecoder('utf-8', { fatal: false }).decode(limited).replace(/\u0000/g, '\uFFFD');
}

/**
 * The outcome with our own credentials cut out of what the subscriber sent back: a subscriber that echoes the
 * request (a debugging endpoint, a proxy error page) would otherwise put the basic-auth password into the admin's
 * view, where it is write-only by design. Each secret of 6 characters or more, in the spellings of
 * src/webhooks/secret-redaction.ts, and the start of one where a text was cut (the body: `bodyCut`, see
 * HttpExchange's `complete`). `needles`: the secrets as redactionNeedles prepares them, once per endpoint.
 */
export function withoutSecrets(outcome: DeliveryOutcome, needles: RedactionNeedles, { bodyCut = false } = {}): DeliveryOutcome {
  if (needles.length === 0) return outcome;
  const { responseBody: body, error } = outcome;
  // Either text may have been cut through a secret: a body that did not arrive whole (`bodyCut`), an error text
  // bounded with its mark. What it ends with of a secret's start goes too.
  const errorCut = error?.endsWith(CUT_MARK) === true;
  return {
    ...outcome,
    responseBody: body === null ? null : redactNeedles(body, needles, { cut: bodyCut }),
    error: error === null ? null : errorCut ? `${redactNeedles(error.slice(0, -CUT_MARK.length), needles, { cut: true })}${CUT_MARK}` : redactNeedles(error, needles),
  };
}

/**
 * The spec's rule: a 2xx within the time limit is delivered; any other status (redirects are not followed),
 * a connection error or no answer in time is a failure.
 */
export function classifyExchange(exchange: HttpExchange): DeliveryOutcome {
  switch (exchange.kind) {
    case 'response': {
      const delivered = exchange.status >= 200 && exchange.status < 300;
      const redirect = exchange.status >= 300 && exchange.status < 400;
      return {
        outcome: delivered ? 'delivered' : 'failed',
        responseCode: exchange.status,
        responseBody: storableResponseBody(exchange.body),
        error: redirect ? bounded(`Redirect not followed (Location: ${exchange.location ?? 'none'})`) : null,
      };
    }
    case 'timeout':
      return {
        outcome: 'failed',
        responseCode: null,
        responseBody: null,
        error: `No response within ${exchange.timeoutMs / 1000} s`,
      };
    case 'connection-error':
      return { outcome: 'failed', responseCode: null, responseBody: null, error: bounded(`Connection error: ${exchange.message}`) };
    case 'not-sent':
      return { outcome: 'failed', responseCode: null, responseBody: null, error: bounded(`Not sent: ${exchange.reason}`) };
  }
}

/**
 * An attempt's `error.type` in the HTTP semantic conventions: the status code of an answer that is no delivery,
 * otherwise why none came; undefined for a delivery.
 */
export function exchangeErrorType(exchange: HttpExchange): string | undefined {
  if (exchange.kind !== 'response') return exchange.kind;
  return exchange.status >= 200 && exchange.status < 300 ? undefined : String(exchange.status);
}
