import { loadConfig } from '../../src/config';

// The OTEL_* settings of the OpenTelemetry specification, as far as this service takes them: tracing is on only with
// OTEL_TRACES_EXPORTER, and a value it does not take refuses the start, by name, rather than tracing otherwise.

test('tracing is off unless OTEL_TRACES_EXPORTER names an exporter; `none` and empty are off too', () => {
  expect(loadConfig({}).tracing).toBeUndefined();
  expect(loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' }).tracing).toBeUndefined();
  expect(loadConfig({ OTEL_TRACES_EXPORTER: '' }).tracing).toBeUndefined();
});

test('with otlp: the traces URL from the endpoint, protocol, service name, resource attributes and sampler', () => {
  expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing).toEqual({
    exporter: 'otlp',
    tracesUrl: 'http://localhost:4318/v1/traces',
    protocol: 'http/protobuf',
    serviceName: undefined,
    resourceAttributes: {},
    sampler: 'parentbased_always_on',
    samplerRatio: 1,
  });
  expect(
    loadConfig({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.org:4318/',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'donations-api',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=Spenden%20%26%20CRM',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    }).tracing,
  ).toEqual({
    exporter: 'otlp',
    tracesUrl: 'https://collector.example.org:4318/v1/traces',
    protocol: 'http/json',
    serviceName: 'donations-api',
    resourceAttributes: { 'deployment.environment.name': 'prod', team: 'Spenden & CRM' },
    sampler: 'parentbased_traceidratio',
    samplerRatio: 0.1,
  });
});

test('a value the service does not take refuses the start, naming the setting', () => {
  const on = { OTEL_TRACES_EXPORTER: 'otlp' };
  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ OTEL_TRACES_EXPORTER: 'otlp,console' }, /OTEL_TRACES_EXPORTER: must be one of otlp, console, none/],
    [{ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL: must be one of http\/protobuf, http\/json \(gRPC is not supported\)/],
    [{ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT/],
    [{ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }, /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/],
    [{ ...on, OTEL_TRACES_SAMPLER: 'ratio' }, /OTEL_TRACES_SAMPLER: must be one of always_on/],
    [{ ...on, OTEL_TRACES_SAMPLER_ARG: '10' }, /OTEL_TRACES_SAMPLER_ARG/],
    [{ ...on, OTEL_TRACES_SAMPLER_ARG: 'ten percent' }, /OTEL_TRACES_SAMPLER_ARG/],
    [{ ...on, OTEL_RESOURCE_ATTRIBUTES: 'team' }, /OTEL_RESOURCE_ATTRIBUTES: must be key=value pairs/],
    [{ ...on, OTEL_RESOURCE_ATTRIBUTES: 'team=%E0%A4%A' }, /OTEL_RESOURCE_ATTRIBUTES has a value that is not valid percent-encoding/],
    [{ WEBHOOK_SEND_TRACEPARENT: 'sure' }, /WEBHOOK_SEND_TRACEPARENT/],
  ];
  for (const [env, message] of refused) expect(() => loadConfig(env)).toThrow(message);
});

test('traceparent goes to the subscriber only when WEBHOOK_SEND_TRACEPARENT says so', () => {
  expect(loadConfig({}).webhooks.sendTraceparent).toBe(false);
  expect(loadConfig({ WEBHOOK_SEND_TRACEPARENT: 'true' }).webhooks.sendTraceparent).toBe(true);
});
