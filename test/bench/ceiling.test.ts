import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { BENCH_SUBSCRIBER_AUTHORIZATION, createCeilingActivities } from '../../bench/ceiling/activities';
import { createTimeSkippingEnvironment } from '../support/temporal';

// The benchmark's ceiling (bench/ceiling/): one workflow per event whose local activity POSTs the body. If it
// stopped delivering, or delivered something else than the body it was given, the comparison would be void.
let env: TestWorkflowEnvironment;
let server: http.Server;
let url: string;
const received: Array<{ body: string; authorization?: string; contentType?: string }> = [];
let replyStatus = 200;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), authorization: req.headers.authorization, contentType: req.headers['content-type'] });
      res.writeHead(replyStatus).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await env?.teardown();
});

test('delivers the body it was started with, as a delivery does, and retries until a 2xx', async () => {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'ceiling-test',
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('../../bench/ceiling/workflow'), logger: new DefaultLogger('WARN') }),
    activities: createCeilingActivities(url),
  });
  const body = JSON.stringify({ id: 1, data: { donation: { payment: { transaction_id: 'ceiling-1' } } } });
  replyStatus = 503;
  const status = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('ceilingDelivery', { taskQueue: 'ceiling-test', workflowId: 'ceiling-1', args: [body] });
    // The first answer fails; the local activity's retry (1 s later, skipped in time) gets the 200.
    while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    replyStatus = 200;
    return handle.result();
  });
  expect(status).toBe(200);
  expect(received.length).toBeGreaterThanOrEqual(2);
  expect(received.at(-1)).toEqual({ body, authorization: BENCH_SUBSCRIBER_AUTHORIZATION, contentType: 'application/json' });
});
