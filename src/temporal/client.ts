import { Client, Connection } from '@temporalio/client';
import { retriesEndingWithTheConnection } from './closed-connection';
import type { TemporalConnectionOptions } from './connection-settings';
import { tracingClientInterceptors } from '../tracing';

export interface TemporalClientOptions extends TemporalConnectionOptions {
  namespace: string;
}

/**
 * A client whose connection is made on first use and remade after Temporal restarts, so the relay and the admin API
 * can start while Temporal is down. Calls give up after a few quick gRPC retries: the relay has its own backoff,
 * and an operator's resend should answer 503 promptly rather than hang. TLS and the API key as
 * src/temporal/connection.ts made them. While tracing is on, a workflow started through it carries the caller's trace
 * context (src/tracing.ts).
 */
export function createTemporalClient({ namespace, ...connectionOptions }: TemporalClientOptions): Client {
  const connection = Connection.lazy({
    ...connectionOptions,
    interceptors: retriesEndingWithTheConnection({ maxAttempts: 3 }),
    // grpc-js would otherwise back off up to two minutes between reconnects after an outage.
    channelArgs: { 'grpc.initial_reconnect_backoff_ms': 500, 'grpc.max_reconnect_backoff_ms': 5_000 },
  });
  return new Client({ connection, namespace, interceptors: tracingClientInterceptors() });
}
