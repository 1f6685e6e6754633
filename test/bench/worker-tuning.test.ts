import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import pino from 'pino';
import { parseTunings } from '../../bench/support/worker-tuning';
import { createDb } from '../../src/db/knex';
import { createKeyring, parseSecretsKeys } from '../../src/secrets/keyring';
import {
  CONCURRENT_ATTEMPTS,
  createDeliveryWorker,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  deliveryWorkerSettings,
  deliveryWorkflowsPath,
  WORKFLOW_TASK_POLLERS,
} from '../../src/temporal/worker';
import { createTimeSkippingEnvironment } from '../support/temporal';

describe('deliveryWorkerSettings', () => {
  test('keeps our defaults where the tuning sets nothing, also for keys given as undefined', () => {
    const defaults = {
      maxCachedWorkflows: DEFAULT_MAX_CACHED_WORKFLOWS,
      // A slot for every attempt and one for every poller, which holds a slot while it waits.
      maxConcurrentWorkflowTaskExecutions: CONCURRENT_ATTEMPTS + WORKFLOW_TASK_POLLERS,
      maxConcurrentLocalActivityExecutions: CONCURRENT_ATTEMPTS,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: WORKFLOW_TASK_POLLERS },
    };
    expect(deliveryWorkerSettings()).toEqual(defaults);
    expect(deliveryWorkerSettings({ maxCachedWorkflows: undefined, workflowTaskPollerBehavior: undefined })).toEqual(defaults);
  });

  test('lets the tuning override a default and add the poller settings, with a slot for each poller', () => {
    const pollers = { type: 'simple-maximum', maximum: 30 } as const;
    expect(
      deliveryWorkerSettings({ maxConcurrentLocalActivityExecutions: 20, workflowTaskPollerBehavior: pollers, nonStickyToStickyPollRatio: 1 }),
    ).toEqual({
      maxCachedWorkflows: DEFAULT_MAX_CACHED_WORKFLOWS,
      maxConcurrentWorkflowTaskExecutions: CONCURRENT_ATTEMPTS + 30,
      maxConcurrentLocalActivityExecutions: 20,
      workflowTaskPollerBehavior: pollers,
      nonStickyToStickyPollRatio: 1,
    });
  });
});

describe('a delivery worker with a tuning', () => {
  let env: TestWorkflowEnvironment;
  const db = createDb({ connectionString: 'postgres://nobody@127.0.0.1:1/none' }); // never queried
  /** What every delivery worker here is made with; each test adds the settings it looks at. */
  const baseOptions = () => ({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue: 'tuning-test',
    db,
    log: pino({ level: 'silent' }),
    allowPrivateAddresses: true,
    keyring: createKeyring(parseSecretsKeys('c'.repeat(64))),
  });

  beforeAll(async () => {
    env = await createTimeSkippingEnvironment();
  });

  afterAll(async () => {
    await db.destroy();
    await env?.teardown();
  });

  test('runs with the tuning, while maxCachedWorkflows given on its own wins over the tuning', async () => {
    const worker = await createDeliveryWorker({
      ...baseOptions(),
      installation: 'tuning-test',
      workflowBundle: await bundleWorkflowCode({ workflowsPath: deliveryWorkflowsPath, logger: new DefaultLogger('WARN') }),
      maxCachedWorkflows: 70,
      tuning: {
        maxCachedWorkflows: 99,
        workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 30 },
        nonStickyToStickyPollRatio: 0.5,
        maxConcurrentWorkflowTaskExecutions: 60,
      },
    });
    expect(worker.options.maxCachedWorkflows).toBe(70);
    expect(worker.options.nonStickyToStickyPollRatio).toBe(0.5);
    expect(worker.options.workflowTaskPollerBehavior).toEqual({ type: 'simple-maximum', maximum: 30 });
    expect(worker.options.tuner.workflowTaskSlotSupplier).toMatchObject({ type: 'fixed-size', numSlots: 60 });
    expect(worker.options.tuner.localActivityTaskSlotSupplier).toMatchObject({ type: 'fixed-size', numSlots: CONCURRENT_ATTEMPTS });
    await worker.runUntil(Promise.resolve()); // releases the connection
  });

  test('refuses a cache smaller than its workflow task slots, which the SDK would cut without a word', async () => {
    await expect(createDeliveryWorker({ ...baseOptions(), maxCachedWorkflows: CONCURRENT_ATTEMPTS + WORKFLOW_TASK_POLLERS - 1 })).rejects.toThrow(
      `TEMPORAL_MAX_CACHED_WORKFLOWS is ${CONCURRENT_ATTEMPTS + WORKFLOW_TASK_POLLERS - 1}, fewer than the worker's ${CONCURRENT_ATTEMPTS + WORKFLOW_TASK_POLLERS} workflow task slots`,
    );
    await expect(createDeliveryWorker({ ...baseOptions(), maxCachedWorkflows: 100, workflowTaskPollers: 100 })).rejects.toThrow(/lower TEMPORAL_WORKFLOW_TASK_POLLERS$/);
  });
});

describe('parseTunings', () => {
  test('reads named settings, a bare name standing for the defaults', () => {
    expect(
      parseTunings(
        'default; polls50:workflowTaskPollerBehavior=simple/50,nonStickyToStickyPollRatio=0.5;auto:workflowTaskPollerBehavior=autoscaling/40;fixed:workflowTaskPollerBehavior=simple/8,relay.loops=4,relay.batchSize=25;serial:relay.maxConcurrentPasses=1;one:layout=combined;traced:layout=combined,tracing=0.1',
      ),
    ).toEqual([
      { name: 'default', tuning: {}, relay: {}, layout: 'separate' },
      {
        name: 'polls50',
        tuning: { workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 50 }, nonStickyToStickyPollRatio: 0.5 },
        relay: {},
        layout: 'separate',
      },
      { name: 'auto', tuning: { workflowTaskPollerBehavior: { type: 'autoscaling', maximum: 40 } }, relay: {}, layout: 'separate' },
      { name: 'fixed', tuning: { workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 8 } }, relay: { loops: 4, batchSize: 25 }, layout: 'separate' },
      // The relay's passes one at a time, as before they could overlap.
      { name: 'serial', tuning: {}, relay: { maxConcurrentPasses: 1 }, layout: 'separate' },
      { name: 'one', tuning: {}, relay: {}, layout: 'combined' },
      // Tracing goes with the combined role: it is the service's environment, not a worker setting.
      { name: 'traced', tuning: {}, relay: {}, layout: 'combined', tracing: 0.1 },
    ]);
  });

  test.each([
    ['an unknown setting', 'x:maxConcurrentActivityTaskPolls=3', /unknown worker setting/],
    // SDK 1.24 ignores it: accepting it would measure the defaults under another name.
    ['maxConcurrentWorkflowTaskPolls', 'x:maxConcurrentWorkflowTaskPolls=50', /unknown worker setting/],
    ['a value that is no number', 'x:maxCachedWorkflows=many', /not a number/],
    ['an empty value', 'x:maxCachedWorkflows=', /not a number/],
    ['a negative value', 'x:maxCachedWorkflows=-1', /not a number/],
    ['a pair without =', 'x:maxCachedWorkflows', /not key=value/],
    ['an unknown poller behaviour', 'x:workflowTaskPollerBehavior=eager', /neither autoscaling/],
    ['a name given twice', 'a;a:maxCachedWorkflows=1', /distinct/],
    ['a missing name', ':maxCachedWorkflows=1', /distinct/],
    ['an unknown relay setting', 'x:relay.workers=2', /unknown worker setting/],
    ['an unknown layout', 'x:layout=merged', /neither separate nor combined/],
    ['worker settings for the combined role, which takes none', 'x:layout=combined,maxCachedWorkflows=10', /takes no worker or relay setting/],
    ['a sampling ratio above 1', 'x:tracing=10', /not a sampling ratio/],
    ['a sampling ratio that is no number', 'x:tracing=half', /not a sampling ratio/],
    ['an empty sampling ratio', 'x:tracing=', /not a sampling ratio/],
  ])('refuses %s', (_, text, message) => {
    expect(() => parseTunings(text)).toThrow(message);
  });
});
