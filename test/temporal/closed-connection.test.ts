import { type sendUnaryData, Server, ServerCredentials, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { Connection } from '@temporalio/client';
import { createTemporalClient } from '../../src/temporal/client';
import { RETRIES_END_WITH_THE_CONNECTION } from '../support/temporal';

/*
 * The service's Temporal client retries a call Temporal does not answer, waiting on a timer between tries. A process
 * that stops meanwhile closes the connection before that timer fires (src/temporal/closed-connection.ts): the call
 * must fail, not end the process with an uncaught "Channel has been shut down" (which Jest reports as a failed suite)
 * and stay unsettled.
 */

const DESCRIBE_NAMESPACE = '/temporal.api.workflowservice.v1.WorkflowService/DescribeNamespace';

/**
 * A frontend that answers every DescribeNamespace with UNAVAILABLE, as Temporal does while it starts; counts them.
 * `answered` resolves with its first answer.
 */
async function unavailableFrontend(): Promise<{ address: string; calls: () => number; answered: Promise<void>; stop: () => void }> {
  let calls = 0;
  let firstAnswer!: () => void;
  const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
  const server = new Server();
  const identity = (value: Buffer) => value;
  server.register(
    DESCRIBE_NAMESPACE,
    (_call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      calls += 1;
      callback({ code: status.UNAVAILABLE, details: 'not serving yet' });
      firstAnswer();
    },
    identity,
    identity,
    'unary',
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return { address: `127.0.0.1:${port}`, calls: () => calls, answered, stop: () => server.forceShutdown() };
}

let frontend: Awaited<ReturnType<typeof unavailableFrontend>>;
beforeAll(async () => {
  frontend = await unavailableFrontend();
});
// Also after a call that never settles timed the test out: the server would keep Jest from ending.
afterAll(() => frontend?.stop());

test('a call waiting for its next try when the connection is closed fails as CANCELLED; nothing is thrown later', async () => {
  const client = createTemporalClient({ address: frontend.address, namespace: 'default' });
  const call = client.workflowService.describeNamespace({ namespace: 'default' });
  call.catch(() => undefined);
  // The first try was answered: its retry waits on a timer (100 ms and more), and the connection closes before it.
  await frontend.answered;
  await client.connection.close();
  await expect(call).rejects.toThrow(/CANCELLED: The connection to Temporal was closed/);
  expect(frontend.calls()).toBe(1);
});

test("the test environments' connections (test/support/temporal.ts) fail such a call the same way", async () => {
  const own = await unavailableFrontend();
  try {
    const connection = Connection.lazy({ address: own.address, plugins: [RETRIES_END_WITH_THE_CONNECTION] });
    const call = connection.workflowService.describeNamespace({ namespace: 'default' });
    call.catch(() => undefined);
    await own.answered;
    await connection.close();
    await expect(call).rejects.toThrow(/CANCELLED: The connection to Temporal was closed/);
    expect(own.calls()).toBe(1);
  } finally {
    own.stop();
  }
});
