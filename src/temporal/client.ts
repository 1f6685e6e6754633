import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

export interface TemporalClientOptions {
  address: string;
  namespace: string;
}

/**
 * A client whose connection is made on first use and remade after Temporal restarts, so the relay and the admin API
 * can start while Temporal is down. Calls give up after a few quick gRPC retries: the relay has its own backoff,
 * and an operator's resend should answer 503 promptly rather than hang.
 */
export function createTemporalClient({ address, namespace }: TemporalClientOptions): Client {
  const connection = Connection.lazy({
    address,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 3 }))],
    // grpc-js would otherwise back off up to two minutes between reconnects after an outage.
    channelArgs: { 'grpc.initial_reconnect_backoff_ms': 500, 'grpc.max_reconnect_backoff_ms': 5_000 },
  });
  return new Client({ connection, namespace });
}
