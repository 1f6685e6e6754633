import { InterceptingCall, type Interceptor, Metadata, status } from '@grpc/grpc-js';
import { type BackoffOptions, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

// grpc-js names the type of the call an InterceptingCall wraps, but does not export it.
type InterceptingCallInterface = ConstructorParameters<typeof InterceptingCall>[0];

/** A call that never reaches the server: it ends at once with `details`, as CANCELLED. */
function cancelledCall(details: string): InterceptingCallInterface {
  return {
    start(_metadata, listener) {
      // Later, as a call's status always comes: the caller has not yet sent its message when start() returns.
      process.nextTick(() => listener?.onReceiveStatus?.({ code: status.CANCELLED, details, metadata: new Metadata() }));
    },
    cancelWithStatus: () => undefined,
    getPeer: () => '',
    sendMessageWithContext: () => undefined,
    sendMessage: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    getAuthContext: () => null,
  };
}

/**
 * To be placed after the SDK's retrying interceptor (makeGrpcRetryInterceptor). That one waits for each retry on a
 * timer and then starts it on the channel, which throws once the connection was closed in the meantime: a stop while
 * Temporal did not answer ended the process with an uncaught "Channel has been shut down", and the call never
 * settled. Here such a retry ends as CANCELLED, which the retrying interceptor does not retry: the call fails. (The
 * channel's other refusals are type errors in its arguments, which the SDK's calls never make.)
 */
export const failCallsOnClosedConnection: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (err) {
    return new InterceptingCall(cancelledCall(`The connection to Temporal was closed: ${(err as Error).message}`));
  }
};

/**
 * The SDK's retries (its default interceptor, `maxAttempts` and the rest as given), each of which fails its call
 * when the connection was closed before it began, instead of throwing from its timer into whatever this process runs
 * next: a Connection's `interceptors`.
 */
export function retriesEndingWithTheConnection(retry: Partial<BackoffOptions> = {}): Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions(retry)), failCallsOnClosedConnection];
}
