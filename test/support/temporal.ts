import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { testServerExecutable } from '../../src/temporal/binaries';

// Worker state changes at INFO drown the test output; warnings and errors still show. The Rust core warns on every
// worker start that the time-skipping server lacks a heartbeat capability it does not need here: errors only there.
try {
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }) } },
  });
} catch {
  // Already installed by another test file in this worker process.
}

/** The time-skipping test server, from the project's .tools folder when present (no download needed). */
export function createTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: testServerExecutable(process.env.TEMPORAL_TEST_SERVER_PATH) },
  });
}
