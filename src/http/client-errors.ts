import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_CODES, type ErrorCode } from '../shared/errors';

/** What Node's own refusals mean, by the parser's error code; anything else it refuses is a malformed request. */
const PARSER_REFUSALS: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'headers_too_large', message: 'The request line and headers are larger than the limit' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { code: 'payload_too_large', message: 'The chunk extensions are larger than the limit' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', message: 'The request did not arrive in time' },
};
const MALFORMED = { code: 'bad_request' as const, message: 'The request is not valid HTTP (method, target, headers or framing)' };
const CONNECT_REFUSED = { code: 'not_implemented' as const, message: 'CONNECT is not implemented: this service is not a proxy' };
const EXPECTATION_FAILED = { code: 'expectation_failed' as const, message: 'The only expectation this service meets is Expect: 100-continue' };
const HOST_MISSING = { code: 'bad_request' as const, message: 'An HTTP/1.1 request must have a Host header' };

/** The app's JSON error, and the headers every refusal made here has: the connection ends after it. */
function refusal({ code, message }: { code: ErrorCode; message: string }) {
  const { status } = ERROR_CODES[code];
  const body = JSON.stringify({ error: message, code });
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
  };
  return { status, headers, body };
}

/** A refusal as raw HTTP, for a socket that no response object owns. */
function rawRefusal(meaning: { code: ErrorCode; message: string }): string {
  const { status, headers, body } = refusal(meaning);
  return [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), '', body].join('\r\n');
}

/** A refusal on a response Node created, which keeps its place among pipelined answers. */
function respondWithRefusal(res: ServerResponse, meaning: { code: ErrorCode; message: string }): void {
  const { status, headers, body } = refusal(meaning);
  res.writeHead(status, headers);
  res.end(body);
}

/** The raw HTTP answer to a request that Node's parser refused: the app's JSON error shape, and the connection ends. */
export function clientErrorAnswer(err: NodeJS.ErrnoException): string {
  return rawRefusal((err.code && PARSER_REFUSALS[err.code]) || MALFORMED);
}

/**
 * Writes `answer` on a socket that Node has given up parsing, and closes it. When the app is still answering an
 * earlier request on the connection: if that request's body is what failed to parse, the refusal is its answer (or,
 * once its answer has begun, the connection just closes); if the refused request was pipelined after a complete
 * one, the refusal waits for that answer to end, or it would read as its answer.
 */
function refuseOnSocket(socket: Duplex, answer: string): void {
  const refuse = () => {
    if (socket.writable) socket.end(answer, () => socket.destroy());
    else socket.destroy();
  };
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!inFlight || inFlight.writableFinished) refuse();
  else if (inFlight.req.complete) inFlight.once('close', refuse);
  else if (inFlight.headersSent) socket.destroy();
  else refuse();
}

const HOST_REPEATED = { code: 'bad_request' as const, message: 'A request must have one Host header, not several' };
const AUTHORIZATION_REPEATED = { code: 'bad_request' as const, message: 'A request must have at most one Authorization header, not several' };
const TRANSFER_CODING_REFUSED = { code: 'not_implemented' as const, message: 'The only Transfer-Encoding this service implements is chunked alone' };

/** Whether a field stands more than once (raw headers are name, value, name, value …); `name` in lower case. */
function repeated(rawHeaders: string[], name: string): boolean {
  let count = 0;
  for (let i = 0; i < rawHeaders.length && count < 2; i += 2) if (rawHeaders[i].toLowerCase() === name) count += 1;
  return count > 1;
}

/**
 * What makes a request that Node accepts ambiguous, or undefined. Host and Authorization: at most one each (RFC 9112
 * §3.2, RFC 9110 §5.3: neither is a list); Node keeps the first of several, which a proxy in front may not, so that
 * two parties would judge the request by different credentials or host. On HTTP/1.1 a Host at all. Expect: exactly
 * `100-continue` on HTTP/1.1 (RFC 9110 §10.1.1; HTTP/1.0 has no expectations); Node takes any list containing it
 * (`100-continue, foo`).
 */
function headerRefusal(req: IncomingMessage): { code: ErrorCode; message: string } | undefined {
  if (repeated(req.rawHeaders, 'host')) return HOST_REPEATED;
  if (repeated(req.rawHeaders, 'authorization')) return AUTHORIZATION_REPEATED;
  // Node reads `gzip, chunked` as chunked and ignores the gzip, where a proxy in front refuses it or decodes it: two
  // readings of one body. RFC 9112 §6.1: a transfer coding the server does not implement is a 501. (A list that does
  // not end in chunked leaves the body without an end; Node's parser refuses that itself.)
  const codings = (req.headers['transfer-encoding'] ?? '').split(',').map((coding) => coding.trim().toLowerCase());
  if (codings.length > 1 && codings.at(-1) === 'chunked') return TRANSFER_CODING_REFUSED;
  if (req.httpVersion !== '1.1') return undefined;
  if (req.headers.host === undefined) return HOST_MISSING;
  const { expect } = req.headers;
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') return EXPECTATION_FAILED;
  return undefined;
}

/**
 * Hands requests to the server's own handler, except those headerRefusal refuses, which Node would answer with a
 * bare 400 of its own or take: refused here in JSON, before the interim `100 Continue` of a request that asks for it.
 * Needs the handler attached, as `listen` does.
 */
function refuseAmbiguousHeaders(server: Server): void {
  const handlers = server.listeners('request') as RequestListener[];
  if (handlers.length === 0) throw new Error('answerClientErrors needs the server with its request handler');
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const refusal = headerRefusal(req);
    if (refusal) return respondWithRefusal(res, refusal);
    for (const handler of handlers) handler.call(server, req, res);
  });
  // With a listener here Node leaves the interim 100 to it (its default writes it before any check). Once it is
  // written the request goes on as any other, through every `request` listener (src/http/graceful-close.ts has one).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const refusal = headerRefusal(req);
    if (refusal) return respondWithRefusal(res, refusal);
    res.writeContinue();
    server.emit('request', req, res);
  });
}

/**
 * Answers, with the JSON error every other refusal has, what Node would otherwise answer by itself before the app
 * runs (docs/api.md#every-operation-read-api-tokens-platform-admin-probes), and closes the connection. Returns the server.
 * - `clientError`: what the parser refuses (an unknown method, a target not starting with `/`, headers over the
 *   limit, conflicting Content-Length and Transfer-Encoding, the HTTP/2 preface): Node's bare status line. A
 *   connection the client already reset is only closed.
 * - `connect`: a CONNECT request, which Node would close without an answer: 501, as no path of ours has it.
 * - `checkExpectation`: an `Expect` other than `100-continue`, which Node answers with a bare 417.
 * - an HTTP/1.1 request without Host, which Node answers with a bare 400; several Host or Authorization fields, and
 *   an `Expect` that lists `100-continue` with something else, which Node takes, and a Transfer-Encoding that lists
 *   codings before `chunked` (headerRefusal).
 * Requests with `Upgrade` reach the app as any other (there is no `upgrade` listener), and `Expect: 100-continue`
 * gets Node's interim `100 Continue` before the app answers.
 */
export function answerClientErrors(server: Server): Server {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET') socket.destroy();
    else refuseOnSocket(socket, clientErrorAnswer(err));
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    // Node has taken its own error listener off a CONNECT socket: without this, a reset would crash the process.
    socket.on('error', () => socket.destroy());
    refuseOnSocket(socket, rawRefusal(CONNECT_REFUSED));
  });
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => respondWithRefusal(res, EXPECTATION_FAILED));
  refuseAmbiguousHeaders(server);
  return server;
}
