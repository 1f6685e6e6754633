import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';

// Activity failures are asserted by the tests; the SDK's own logging of them would only clutter the output.
const quietSdkLogger = new DefaultLogger('ERROR');

/** Runs an activity function as the delivery workflow `workflowId` would, outside any worker. */
export function runActivity<A extends unknown[], R>(workflowId: string, fn: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment({ workflowExecution: { workflowId, runId: 'run' } }, { logger: quietSdkLogger }).run(
    fn,
    ...args,
  ) as Promise<R>;
}
