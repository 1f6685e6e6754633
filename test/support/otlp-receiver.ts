import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OTLP/HTTP receiver on loopback for OTLP's JSON encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json): what the
 * service's processes export, as a collector or Jaeger would take it, flattened to spans.
 */

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };

export interface ReceivedSpan {
  service: string;
  name: string;
  /** 1 internal, 2 server, 3 client (OTLP's SpanKind). */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, string | number | boolean | undefined>;
  links: Array<{ traceId: string; spanId: string }>;
}

export interface OtlpReceiver {
  endpoint: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

const valueOf = (value: AnyValue) => value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue;
const attributesOf = (attributes: Array<{ key: string; value: AnyValue }> = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));

interface ExportRequest {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: AnyValue }> };
    scopeSpans: Array<{ spans: Array<Omit<ReceivedSpan, 'service' | 'attributes'> & { attributes?: Array<{ key: string; value: AnyValue }> }> }>;
  }>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const { resource, scopeSpans } of request.resourceSpans) {
        const service = String(attributesOf(resource.attributes)['service.name']);
        for (const scope of scopeSpans) {
          for (const span of scope.spans) {
            spans.push({ ...span, service, attributes: attributesOf(span.attributes), links: span.links ?? [] });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
