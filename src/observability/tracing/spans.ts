import {
  type Attributes,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import type { AttemptFacts, AttemptSpan, StoredTraceContext, TracingImplementation } from '../../tracing';

/** The spans this service makes itself, and the trace context it stores and restores (src/tracing.ts). */

type Carrier = Record<string, string>;

/**
 * The active context's `traceparent`; undefined outside a trace. A context that was not sampled is stored too, so that
 * the delivery it causes is left out as well (parent-based sampling). A caller's `tracestate` is not kept: it is the
 * caller's own data, which would otherwise sit in our rows and reach the subscriber with every attempt.
 */
export function currentContext(): StoredTraceContext | undefined {
  const carrier: Carrier = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? { traceparent: carrier.traceparent } : undefined;
}

/** Only `traceparent`, also for a context restored from a row stored with a `tracestate`. */
function traceparentOf(carrier: Carrier): Record<string, string> {
  return carrier.traceparent ? { traceparent: carrier.traceparent } : {};
}

/** A stored context as a parent, beneath nothing of the caller's: the event's trace is the one to join. */
const contextOf = (stored: StoredTraceContext) => propagation.extract(ROOT_CONTEXT, { ...stored });

export function inContext<T>(stored: StoredTraceContext, fn: () => Promise<T>): Promise<T> {
  return context.with(contextOf(stored), fn);
}

/** Ends `span` when `fn` settles, marking it failed with the error `fn` threw. */
async function endingWith<T>(span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

export function linkedTo<T>(tracer: Tracer, name: string, stored: StoredTraceContext, fn: () => Promise<T>): Promise<T> {
  const linked = trace.getSpanContext(contextOf(stored));
  const links = linked && isSpanContextValid(linked) ? [{ context: linked }] : [];
  return tracer.startActiveSpan(name, { links }, (span) => endingWith(span, fn));
}

/**
 * The URL as `url.full` may show it: no user name or password, each query value replaced (a subscriber may take a
 * token in its query), no fragment.
 */
export function urlWithoutSecrets(target: URL): string {
  const shown = new URL(target.href);
  shown.username = '';
  shown.password = '';
  shown.hash = '';
  shown.search = queryWithoutValues(shown.search);
  return shown.href;
}

/** A query string (with or without its `?`) with each value replaced: the names show what was asked, not with what. */
export function queryWithoutValues(query: string): string {
  const params = new URLSearchParams(query);
  for (const key of new Set(params.keys())) params.set(key, 'REDACTED');
  return params.toString();
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** Where a POST goes, as the semantic conventions name it; nothing for a URL that does not parse (it is not sent). */
function targetAttributes(url: string): Attributes {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return {};
  }
  return {
    [ATTR_URL_FULL]: urlWithoutSecrets(target),
    [ATTR_SERVER_ADDRESS]: target.hostname.replace(/^\[|\]$/g, ''),
    [ATTR_SERVER_PORT]: target.port === '' ? DEFAULT_PORTS[target.protocol] : Number(target.port),
  };
}

/** One delivery attempt: a CLIENT span `POST` with the HTTP client attributes of the semantic conventions. */
export function attempt<T>(tracer: Tracer, url: string, facts: AttemptFacts, fn: (span: AttemptSpan) => Promise<T>): Promise<T> {
  const attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: 'POST',
    ...targetAttributes(url),
    'webhook.event.id': facts.eventId,
    'webhook.attempt': facts.attempt,
  };
  return tracer.startActiveSpan('POST', { kind: SpanKind.CLIENT, attributes }, (span) =>
    endingWith(span, () =>
      fn({
        propagationHeaders() {
          const carrier: Carrier = {};
          propagation.inject(context.active(), carrier);
          return traceparentOf(carrier);
        },
        end({ statusCode, errorType }) {
          if (statusCode !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
          if (errorType !== undefined) {
            span.setAttribute(ATTR_ERROR_TYPE, errorType);
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
        },
      }),
    ),
  );
}

/** Gives the request's SERVER span (instrumentation-http) its route: it sets `http.route` and the name from it. */
export function nameServerSpan(route: string): void {
  const metadata = getRPCMetadata(context.active());
  if (metadata?.type === RPCType.HTTP) metadata.route = route;
}

export function logFields(): Record<string, string> {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}

/** The facade's members that need only a tracer. */
export function spanMembers(tracer: Tracer): Omit<TracingImplementation, 'temporal'> {
  return {
    currentContext,
    inContext,
    linkedTo: (name, stored, fn) => linkedTo(tracer, name, stored, fn),
    attempt: (target, facts, fn) => attempt(tracer, target, facts, fn),
    nameServerSpan,
    logFields,
  };
}
