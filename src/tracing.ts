import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';

/*
 * The tracing facade the rest of the code calls. It does nothing until the start command switches tracing on
 * (OTEL_TRACES_EXPORTER) and src/observability/tracing/ installs what does the work; so, without tracing, no module of
 * OpenTelemetry is loaded and each call costs one check (docs/observability.md#traces). Types only from the outside:
 * they vanish from the compiled code.
 */

/** A trace context as an outbox row stores it (migration 023): W3C Trace Context's `traceparent`, nothing of a caller's `tracestate`. */
export interface StoredTraceContext {
  traceparent: string;
}

/** What a delivery attempt's CLIENT span learns of the exchange once it is over. */
export interface AttemptEnd {
  /** The status line's code; undefined when no answer came. */
  statusCode?: number;
  /** Why the attempt failed (`500`, `timeout`, `connection-error`, …); undefined when it was delivered. */
  errorType?: string;
}

export interface AttemptSpan {
  /** The header that carries this span's context to the subscriber: `traceparent` alone. */
  propagationHeaders(): Record<string, string>;
  end(result: AttemptEnd): void;
}

/** Which attempt of which event a CLIENT span is. */
export interface AttemptFacts {
  eventId: number;
  attempt: number;
}

/** What the tracing switched on does; each member is called only while it is installed. */
export interface TracingImplementation {
  currentContext(): StoredTraceContext | undefined;
  inContext<T>(stored: StoredTraceContext, fn: () => Promise<T>): Promise<T>;
  linkedTo<T>(name: string, stored: StoredTraceContext, fn: () => Promise<T>): Promise<T>;
  attempt<T>(url: string, facts: AttemptFacts, fn: (span: AttemptSpan) => Promise<T>): Promise<T>;
  nameServerSpan(route: string): void;
  logFields(): Record<string, string>;
  temporal: {
    clientInterceptors: ClientInterceptors;
    workerOptions: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  };
}

let active: TracingImplementation | undefined;

/** Switches the facade to `implementation` (undefined: off again). */
export function installTracing(implementation: TracingImplementation | undefined): void {
  active = implementation;
}

export const tracingOn = (): boolean => active !== undefined;

/** The active trace context, to be stored with an outbox row; undefined without tracing or outside any trace. */
export const currentTraceContext = (): StoredTraceContext | undefined => active?.currentContext();

/** Runs `fn` inside a stored trace context (an event's, read back from its row), so that what it starts joins it. */
export function inTraceContext<T>(stored: StoredTraceContext | null | undefined, fn: () => Promise<T>): Promise<T> {
  return active && stored ? active.inContext(stored, fn) : fn();
}

/** Runs `fn` in a span of the current trace named `name` that links to a stored trace: a new cause of earlier work. */
export function linkedToTrace<T>(name: string, stored: StoredTraceContext | null | undefined, fn: () => Promise<T>): Promise<T> {
  return active && stored ? active.linkedTo(name, stored, fn) : fn();
}

const UNTRACED_ATTEMPT: AttemptSpan = { propagationHeaders: () => ({}), end: () => undefined };

/** Runs one delivery attempt, a POST to `url`, in a CLIENT span of the HTTP semantic conventions. */
export function traceAttempt<T>(url: string, facts: AttemptFacts, fn: (span: AttemptSpan) => Promise<T>): Promise<T> {
  return active ? active.attempt(url, facts, fn) : fn(UNTRACED_ATTEMPT);
}

/** Names the current request's SERVER span by its route template (`http.route`). */
export function nameServerSpan(route: string): void {
  active?.nameServerSpan(route);
}

/** `trace_id` and `span_id` of the active span, for a log line (pino's mixin); nothing without one. */
export const traceLogFields = (): Record<string, string> => active?.logFields() ?? {};

/** The Temporal client's interceptors: they carry the trace context into a workflow's headers. */
export const tracingClientInterceptors = (): ClientInterceptors | undefined => active?.temporal.clientInterceptors;

/** A delivery worker's interceptors and the sink its workflows' spans leave the sandbox through; undefined: untraced. */
export const tracingWorkerOptions = (): Pick<WorkerOptions, 'interceptors' | 'sinks'> | undefined => active?.temporal.workerOptions;
