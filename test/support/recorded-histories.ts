import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { History } from '@temporalio/common/lib/proto-utils';
import { SERVICE_VERSION } from '../../src/service-info';
import { historyFromJSON, historyToJSON } from './history-json';

/** test/temporal/histories: one folder per release, one JSON file per workflow path, as Temporal exports histories. */
export const HISTORIES_DIR = path.resolve(__dirname, '..', 'temporal', 'histories');

/** The release the code in this checkout is: the version in package.json. */
export const CURRENT_RELEASE = SERVICE_VERSION;

export interface RecordedHistory {
  release: string;
  /** `<workflow type>--<path>`, the file name without `.json`. */
  name: string;
  /** The path of the file, from the repository root. */
  file: string;
  workflowType: string;
  history: History;
}

const releaseDir = (release: string) => path.join(HISTORIES_DIR, release);
const repositoryPath = (file: string) => path.relative(path.resolve(HISTORIES_DIR, '..', '..', '..'), file);

/** The releases that have a folder of histories. */
export function recordedReleases(): string[] {
  return existsSync(HISTORIES_DIR) ? readdirSync(HISTORIES_DIR, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name) : [];
}

/** Every history recorded for a release, in file-name order. */
export function readHistories(release: string): RecordedHistory[] {
  const dir = releaseDir(release);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((fileName) => {
      const file = path.join(dir, fileName);
      const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
      const workflowType = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '(no start event)';
      return { release, name: fileName.replace(/\.json$/, ''), file: repositoryPath(file), workflowType, history };
    });
}

/** Writes one history the way `temporal workflow show --output json` does, indented for readable diffs. */
export function writeHistory(release: string, name: string, history: History): string {
  const dir = releaseDir(release);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(historyToJSON(history), null, 2)}\n`);
  return repositoryPath(file);
}
