import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { sleepFourHours } from '../fixtures/sleep-workflow';
import { createTimeSkippingEnvironment } from '../support/temporal';

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../fixtures/sleep-workflow') });
});

afterAll(async () => {
  await env?.teardown();
});

test('a four-hour sleep completes in seconds of wall time with four hours of workflow time', async () => {
  const taskQueue = `test-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
  });
  const wallStart = Date.now();
  const slept = await worker.runUntil(
    env.client.workflow.execute(sleepFourHours, { taskQueue, workflowId: `sleep-${randomUUID()}` }),
  );
  expect(slept).toBeGreaterThanOrEqual(4 * 60 * 60 * 1000);
  expect(Date.now() - wallStart).toBeLessThan(30_000);
});
