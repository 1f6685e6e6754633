/**
 * Every error code a client can receive, with its HTTP status and what it means: the one list that errors are built
 * from and that the OpenAPI document shows. A code is a stable contract; its message may be reworded.
 */
export const ERROR_CODES = {
  bad_request: { status: 400, meaning: 'The request is malformed (also: not valid HTTP, several Host or Authorization fields, refused before any route)' },
  invalid_parameter: { status: 400, meaning: 'A query or path parameter has a wrong value (`problems` names it)' },
  missing_parameter: { status: 400, meaning: 'A required query parameter is missing (`problems` names it)' },
  invalid_body: { status: 400, meaning: 'The JSON body does not match the operation (`problems` names each field)' },
  malformed_json: { status: 400, meaning: 'The body is not a JSON object or array' },
  malformed_body: { status: 400, meaning: 'The body cannot be read as sent (not UTF-8, broken Content-Encoding, wrong length)' },
  forbidden_key: { status: 400, meaning: 'The JSON body has a key `__proto__`, or `constructor` holding `prototype` (`problems` names it)' },
  unknown_campaign: { status: 400, meaning: 'The body names a campaign that does not exist' },
  unknown_contact: { status: 400, meaning: 'The body names a contact that does not exist' },
  not_authenticated: { status: 401, meaning: 'Credentials are missing, malformed or wrong' },
  authentication_failed: { status: 401, meaning: 'Wrong username or password, or an inactive account' },
  token_not_valid: { status: 401, meaning: 'The token is invalid, expired or blocked' },
  permission_denied: { status: 403, meaning: 'The account is valid but lacks staff permission' },
  cross_origin_request: { status: 403, meaning: 'A browser sent this state-changing request from a page of another origin (`Origin`, `Sec-Fetch-Site`)' },
  not_found: { status: 404, meaning: 'No such path (paths are case-sensitive, spelled as documented), or no such contact' },
  campaign_link_not_found: { status: 404, meaning: 'Unknown or inactive campaign link' },
  page_not_found: { status: 404, meaning: 'The page starts after the last result' },
  webhook_event_not_found: { status: 404, meaning: 'No webhook event with that id' },
  subscription_not_found: { status: 404, meaning: 'No newsletter sign-up with that id' },
  recurring_donation_not_found: { status: 404, meaning: 'No recurring donation with that id' },
  payment_not_found: { status: 404, meaning: 'No payment with that transaction id' },
  recovery_not_found: { status: 404, meaning: 'No bulk recovery with that id (its idempotency key)' },
  method_not_allowed: { status: 405, meaning: 'The path exists, not with this method (see `Allow`)' },
  request_timeout: { status: 408, meaning: 'The request line, headers or body did not arrive in time' },
  transaction_id_in_use: { status: 409, meaning: 'The transaction id belongs to another kind of payment (donation payments and shop orders share one namespace)' },
  transaction_id_reused: { status: 409, meaning: 'The transaction id was recorded for a payment that differs in environment, amounts, currency, donor or method' },
  contact_email_mismatch: { status: 409, meaning: 'The contact named by contact_id has another e-mail address than the sign-up: consent belongs to the address that confirms' },
  recurring_donation_inactive: { status: 409, meaning: 'The recurring donation is no longer active' },
  not_reconcilable: { status: 409, meaning: 'Only completed payments through an online provider can be reconciled' },
  already_reconciled: { status: 409, meaning: 'The payment has been reconciled before (it is reported once)' },
  already_delivered: { status: 409, meaning: 'The webhook event has been delivered; there is nothing to resend' },
  first_attempt_pending: { status: 409, meaning: 'The event is queued: its delivery, and so its first attempt, has not started yet' },
  idempotency_key_reused: { status: 409, meaning: 'The idempotency key was used before for a request with other parameters' },
  endpoint_not_configured: { status: 409, meaning: 'No webhook endpoint is configured yet' },
  endpoint_secret_unreadable: { status: 409, meaning: 'A stored secret of the endpoint does not open with SECRETS_KEYS: the change must give it again (`problems` names each)' },
  endpoint_inactive: { status: 409, meaning: 'The webhook endpoint is switched off; nothing is sent to it' },
  payload_dropped: { status: 409, meaning: 'The event’s payload was dropped after its retention period; it cannot be sent again' },
  workflow_id_conflict: { status: 409, meaning: 'Another event’s workflow holds the event’s workflow id in Temporal; nothing was sent (docs/delivery.md)' },
  payload_too_large: { status: 413, meaning: 'The body is larger than the limit' },
  unsupported_media_type: { status: 415, meaning: 'The body is not `application/json` (or has an unsupported encoding)' },
  expectation_failed: { status: 417, meaning: 'An `Expect` other than `100-continue`, which this service cannot meet' },
  headers_too_large: { status: 431, meaning: 'The request line and headers are larger than the limit (16 KiB)' },
  too_many_login_failures: { status: 429, meaning: 'Too many failed logins; wait as long as `Retry-After` says' },
  internal_error: { status: 500, meaning: 'A fault of the service; it has been logged' },
  not_implemented: { status: 501, meaning: 'CONNECT, which no path of this service has (it is not a proxy), or a Transfer-Encoding other than chunked' },
  api_unavailable: { status: 502, meaning: 'The load balancer in front of the API replicas (Caddy, in the Compose stack) reached none that answered; a call safe to repeat was already sent again (docs/operations.md#the-load-balancer-caddy); try again' },
  too_many_password_checks: { status: 503, meaning: 'Too many password checks are under way at once; try again (`Retry-After`)' },
  service_unavailable: { status: 503, meaning: 'The database is not reachable; try again (`Retry-After`)' },
  delivery_unavailable: { status: 503, meaning: 'The delivery service (Temporal) is not reachable; try again' },
  not_ready: { status: 503, meaning: 'A dependency of the service is unavailable' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Where a problem with the request sits, so that a client can point at the field without parsing the message. */
export interface Problem {
  in: 'query' | 'path' | 'body' | 'header';
  /** The parameter name or the body field's dotted path (`positions.0.amount`); empty for the body as a whole. */
  name: string;
  message: string;
}

/** Enough to fix a request; a body built to have a problem per element must not get a megabyte of answer. */
export const MAX_REPORTED_PROBLEMS = 10;

/** An error whose message is meant for the client; the status follows from the code. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly problems?: Problem[],
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
  }
}

export const badRequest = (message: string, code: ErrorCode = 'invalid_parameter') => new ApiError(code, message);
export const notFound = (message = 'Not found', code: ErrorCode = 'not_found') => new ApiError(code, message);
