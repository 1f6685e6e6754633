import type { Link, SpanContext } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { TracingImplementation } from '../../tracing';

/**
 * Temporal's OpenTelemetry interceptors: the client's put the caller's trace context into a workflow's headers
 * (`StartWorkflow:<type>`), the workflow's run inside it (`RunWorkflow:<type>`, `StartActivity:<name>`; compiled into the
 * traced workflow bundle, scripts/bundle-workflows.ts), the activities' beneath those (`RunActivity:<name>`).
 */

/** The workflow interceptors' module, bundled into the workflow code of a traced worker. */
export const WORKFLOW_INTERCEPTORS_MODULE = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** A span as the workflow sandbox hands it over: the shape of OpenTelemetry SDK 1.x, which the interceptors use. */
interface SandboxSpan extends Omit<ReadableSpan, 'parentSpanContext' | 'instrumentationScope'> {
  parentSpanId?: string;
  instrumentationLibrary: ReadableSpan['instrumentationScope'];
}

/**
 * A workflow's span in this SDK's shape: the interceptors (SDK 1.x) give the parent by id and the scope under its
 * old name, which this SDK's exporters would read as no parent (a root span of its own) and no scope.
 */
function currentShapeOf({ parentSpanId, instrumentationLibrary, ...span }: SandboxSpan, resource: Resource): ReadableSpan {
  const own: SpanContext = span.spanContext();
  return {
    ...span,
    resource,
    instrumentationScope: instrumentationLibrary,
    parentSpanContext: parentSpanId ? { traceId: own.traceId, spanId: parentSpanId, traceFlags: own.traceFlags, isRemote: false } : undefined,
    links: span.links as Link[],
  };
}

export function temporalMembers(processor: SpanProcessor, resource: Resource): TracingImplementation['temporal'] {
  const workflowSpans = {
    onStart: () => undefined,
    onEnd: (span: SandboxSpan) => processor.onEnd(currentShapeOf(span, resource)),
    forceFlush: () => processor.forceFlush(),
    shutdown: () => Promise.resolve(),
  };
  return {
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    workerOptions: {
      interceptors: {
        workflowModules: [WORKFLOW_INTERCEPTORS_MODULE],
        activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
      },
      // The interceptors' types are SDK 1.x's; the spans are converted above and carry this SDK's resource.
      sinks: { exporter: makeWorkflowExporter(workflowSpans as never, resource as never) },
    },
  };
}
