import { type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_CODES, type ErrorCode } from '../shared/errors';

/** What Node's own refusals mean, by the parser's error code; anything else it refuses is a malformed request. */
const PARSER_REFUSALS: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'headers_too_large', message: 'The request line and headers are larger than the limit' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { code: 'payload_too_large', message: 'The chunk extensions are larger than the limit' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', message: 'The request did not arrive in time' },
};
const MALFORMED = { code: 'bad_request' as const, message: 'The request is not valid HTTP (method, target, headers or framing)' };

/** The raw HTTP answer to a request that Node's parser refused: the app's JSON error shape, and the connection ends. */
export function clientErrorAnswer(err: NodeJS.ErrnoException): string {
  const { code, message } = (err.code && PARSER_REFUSALS[err.code]) || MALFORMED;
  const { status } = ERROR_CODES[code];
  const body = JSON.stringify({ error: message, code });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Answers what Node's HTTP parser refuses before the app runs (an unknown method, a target not starting with `/`,
 * headers over the limit, conflicting Content-Length and Transfer-Encoding) with the JSON error every other refusal
 * has, instead of Node's bare status line. A connection that is gone (ECONNRESET) is only closed. Returns the server.
 *
 * When the app is still answering an earlier request on the connection: if that request's body is what failed to
 * parse, the refusal is its answer (or, once its answer has begun, the connection just closes); if the failure is a
 * pipelined request after a complete one, the refusal waits for that answer to end, or it would read as its answer.
 */
export function answerClientErrors(server: Server): Server {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const refuse = () => {
      if (err.code === 'ECONNRESET' || !socket.writable) socket.destroy();
      else socket.end(clientErrorAnswer(err), () => socket.destroy());
    };
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!inFlight || inFlight.writableFinished) refuse();
    else if (inFlight.req.complete) inFlight.once('close', refuse);
    else if (inFlight.headersSent) socket.destroy();
    else refuse();
  });
  return server;
}
