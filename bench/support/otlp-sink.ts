import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP receiver inside the bench process, for measuring what tracing costs the service: it takes every export
 * and answers an empty success (an empty ExportTraceServiceResponse is a valid protobuf message), keeping only counts.
 * A real collector (Jaeger) would compete with the service for the same cores and blur the figure; the sink's own
 * CPU is the bench process's, which the reports show apart.
 */
export class OtlpSink {
  exports = 0;
  bytes = 0;
  private server?: http.Server;
  url = '';

  async listen(): Promise<void> {
    this.server = http.createServer((req, res) => {
      req.on('data', (chunk: Buffer) => {
        this.bytes += chunk.length;
      });
      req.on('end', () => {
        this.exports += 1;
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The roles' environment that sends their spans here, a `ratio` of the traces sampled (1: every trace). */
  environment(ratio: number): Record<string, string> {
    return {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: this.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: String(ratio),
    };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
