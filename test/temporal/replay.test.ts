import { temporal } from '@temporalio/proto';
import { type ReplayResult, Worker, type WorkflowBundle } from '@temporalio/worker';
import { bundleDeliveryWorkflows } from '../support/delivery';
import { type RecordedHistory, readHistories, recordedReleases } from '../support/recorded-histories';
import { SUPPORTED_RELEASES } from '../support/releases';

// Every history recorded by a release still supported (test/support/releases.ts) replays on today's
// workflow code: a delivery sleeping in backoff, a resend, a recovery or a purge that release started can be taken
// over by today's workers without a non-determinism error. It is what a release must keep when its workflows move to
// new code: from unversioned workers to the first versioned release, for the Auto-Upgrade types, for `npm start`
// (docs/delivery.md#releases-and-running-workflows). The histories come from `npm run histories:record`.

const { EventType } = temporal.api.enums.v1;
const recorded = SUPPORTED_RELEASES.flatMap((release) => readHistories(release));
let results: Map<string, ReplayResult>;
const diverging = new Map<string, string>();

/**
 * Where a history stops replaying: the SDK's error names the commands, not the event. The history is replayed up to
 * each workflow task in turn; the first prefix that fails has the differing commands in the task completed last in
 * it, and the first event those commands made in the recorded run is where the code diverged.
 */
async function divergingEvent(workflowBundle: WorkflowBundle, { file, history }: RecordedHistory): Promise<string> {
  const events = history.events ?? [];
  // Cut after a workflow task started: the replay checks every task before it and runs that one as a new one.
  const taskEnds = events.flatMap((event, index) => (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED ? [index + 1] : []));
  const prefixes = [...taskEnds, events.length].map((end) => ({ workflowId: `${file}#${end}`, history: { events: events.slice(0, end) } }));
  for await (const result of Worker.runReplayHistories({ workflowBundle, replayName: 'diverging-event' }, prefixes)) {
    if (!result.error) continue;
    const end = Number(result.workflowId.split('#')[1]);
    const completed = events.slice(0, end).map((event) => event.eventType).lastIndexOf(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    const diverging = events[Math.min(completed + 1, end - 1)];
    return `first diverging event ${Number(diverging.eventId)} (${EventType[diverging.eventType ?? 0]}), made by the workflow task completed at event ${Number(events[completed]?.eventId)}`;
  }
  return 'no prefix fails on its own';
}

beforeAll(async () => {
  const workflowBundle: WorkflowBundle = await bundleDeliveryWorkflows();
  results = new Map();
  const histories = recorded.map(({ file, history }) => ({ workflowId: file, history }));
  for await (const result of Worker.runReplayHistories({ workflowBundle, replayName: 'recorded-histories' }, histories)) {
    results.set(result.workflowId, result);
  }
  for (const recording of recorded) {
    if (results.get(recording.file)?.error) diverging.set(recording.file, await divergingEvent(workflowBundle, recording));
  }
}, 120_000);

test('the histories on file are those of the supported releases, and each release has some of every kind it ran', () => {
  expect(recordedReleases().sort()).toEqual([...SUPPORTED_RELEASES].sort());
  for (const release of SUPPORTED_RELEASES) {
    const types = new Set(readHistories(release).map((history) => history.workflowType));
    expect([release, types.has('deliverEvent') && types.has('resendEvent')]).toEqual([release, true]);
  }
});

test.each(recorded.map((recording) => [recording.file, recording] as const))('%s replays on today’s workflow code', (_file, recording) => {
  const result = results.get(recording.file);
  expect(result).toBeDefined();
  if (result?.error) {
    throw new Error(
      `${recording.workflowType} of release ${recording.release} does not replay on today's workflow code ` +
        `(${recording.file}), ${diverging.get(recording.file)}:\n${result.error.message}\n` +
        'A change to what an existing path of a workflow does (timers, activities, local activities, signals, search ' +
        'attributes) must be guarded with patched() from @temporalio/workflow, or be a path only new inputs take.',
    );
  }
});
