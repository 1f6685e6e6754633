import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { projectRoot } from '../../src/config';
import type { ChildProcessEntry } from '../../stack/child-process';
import type { DevCluster } from '../../stack/dev-cluster';

/**
 * A release of the service made for a drill from this build (dist/): its compiled code copied, changed by the drill
 * only, and its workflows bundled again. Nothing of it is product code: it lives in the drill's folder.
 */
export interface DrillRelease {
  name: string;
  root: string;
  /** Its workflow bundle, for replaying a history on its code. */
  workflowBundlePath: string;
  /** `node <root>/dist/src/main.js <role>` as a process of the cluster, with its environment and `env`. */
  startRole(cluster: DevCluster, role: 'delivery' | 'worker', processName: string, env: NodeJS.ProcessEnv): Promise<ChildProcessEntry>;
}

export interface ReleaseChanges {
  /**
   * Divides the retry schedule (5 min, 15 min, 1 h, 4 h) by this much: the drill's backoffs pass in seconds. A drill
   * knob in the copied code; the product's schedule has none.
   */
  scheduleDivisor: number;
  /** One more local activity before the first attempt: a deliverEvent that cannot replay the histories of this build. */
  extraStepBeforeFirstAttempt?: boolean;
}

/** Replaces `from` in a copied file, refusing to go on if the code no longer has it (the drill would prove nothing). */
async function change(file: string, from: string | RegExp, to: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const changed = text.replace(from, to);
  if (changed === text) throw new Error(`drill release: ${path.relative(projectRoot, file)} has changed, cannot apply ${String(from)}`);
  await writeFile(file, changed);
}

export async function buildDrillRelease(dir: string, name: string, changes: ReleaseChanges): Promise<DrillRelease> {
  const root = path.join(dir, `release-${name}`);
  await mkdir(root, { recursive: true });
  await cp(path.join(projectRoot, 'dist'), path.join(root, 'dist'), { recursive: true });
  await cp(path.join(projectRoot, 'package.json'), path.join(root, 'package.json'));
  await symlink(path.join(projectRoot, 'node_modules'), path.join(root, 'node_modules'));
  const dist = path.join(root, 'dist');

  await change(
    path.join(dist, 'src', 'delivery-rules', 'retry-schedule.js'),
    /exports\.RETRY_DELAYS_MS = (\[[^\]]*\]);/,
    `exports.RETRY_DELAYS_MS = $1.map((ms) => ms / ${changes.scheduleDivisor});`,
  );
  if (changes.extraStepBeforeFirstAttempt) {
    await change(
      path.join(dist, 'workflows', 'deliver-event.js'),
      /return (new delivery_1\.Delivery\(eventId,.*\.keepToSchedule\(1\));/,
      'return delivery_1.Delivery.resume(eventId).then(() => $1);',
    );
  }
  const { code } = await bundleWorkflowCode({ workflowsPath: path.join(dist, 'workflows', 'index.js'), logger: new DefaultLogger('WARN') });
  await writeFile(path.join(dist, 'workflow-bundle.js'), code);

  return {
    name,
    root,
    workflowBundlePath: path.join(dist, 'workflow-bundle.js'),
    // DATA_DIR: the cluster's roles keep their generated local secrets in the project's .data; so must these.
    startRole: (cluster, role, processName, env) => cluster.startRole(role, { name: processName, root, env: { DATA_DIR: path.join(projectRoot, '.data'), ...env } }),
  };
}
