import { trace, context, propagation } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION, ATTR_URL_QUERY } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from '../../config';
import { installTracing } from '../../tracing';
import { queryWithoutValues, spanMembers } from './spans';
import { temporalMembers } from './temporal-interceptors';

/*
 * Tracing, switched on by the OTEL_* settings (src/config.ts): the tracer provider with its resource, sampler and
 * exporter, the instrumentations of incoming HTTP and of pg, and the facade (src/tracing.ts) switched to them. The
 * start command loads this module before any instrumented module (src/main.ts), and only when tracing is on.
 */

/** Requests the orchestrator and Prometheus poll every few seconds: each would be a trace of its own, telling nothing. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function samplerOf({ sampler, samplerRatio }: TracingSettings): Sampler {
  const root = sampler.endsWith('always_off') ? new AlwaysOffSampler() : sampler.endsWith('traceidratio') ? new TraceIdRatioBasedSampler(samplerRatio) : new AlwaysOnSampler();
  return sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

function exporterOf({ exporter, protocol, tracesUrl }: TracingSettings): SpanExporter {
  if (exporter === 'console') return new ConsoleSpanExporter();
  return protocol === 'http/json' ? new OtlpJsonExporter({ url: tracesUrl }) : new OtlpProtobufExporter({ url: tracesUrl });
}

export interface Tracing {
  /** Exports what is buffered, then switches the facade and OpenTelemetry's globals off. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  serviceName: string;
  serviceVersion: string;
  /** Instead of the settings' exporter, sending each span as it ends (tests: an InMemorySpanExporter). */
  exporter?: SpanExporter;
}

export function startTracing(settings: TracingSettings, { serviceName, serviceVersion, exporter }: TracingOptions): Tracing {
  const resource = defaultResource().merge(
    resourceFromAttributes({
      ...settings.resourceAttributes,
      [ATTR_SERVICE_NAME]: settings.serviceName ?? settings.resourceAttributes[ATTR_SERVICE_NAME] ?? serviceName,
      [ATTR_SERVICE_VERSION]: serviceVersion,
    }),
  );
  const processor = exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporterOf(settings));
  const provider = new NodeTracerProvider({ resource, sampler: samplerOf(settings), spanProcessors: [processor] });
  provider.register();
  const stopInstrumenting = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => PROBE_PATHS.has((request.url ?? '').split('?')[0]),
        // The instrumentation redacts only a list of known signature parameters; a read API query holds e-mail
        // addresses and dates, so every value goes, as in the attempt's url.full.
        requestHook: (span, request) => {
          const query = 'url' in request ? (request.url ?? '').split('?')[1] : undefined;
          if (query) span.setAttribute(ATTR_URL_QUERY, queryWithoutValues(query));
        },
        // A delivery attempt is a span of ours (spans.ts), and sends `traceparent` only when WEBHOOK_SEND_TRACEPARENT
        // says so; the instrumentation would add it to every outgoing request.
        disableOutgoingRequestInstrumentation: true,
      }),
      // Only inside a trace: the relay's and the gauges' polling would otherwise make a trace per query.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  const tracer = provider.getTracer('donation-webhooks', serviceVersion);
  installTracing({ ...spanMembers(tracer), temporal: temporalMembers(processor, resource) });
  return {
    async shutdown() {
      installTracing(undefined);
      stopInstrumenting();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
