import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Client, isGrpcServiceError } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { Logger } from '../logger';
import { SERVICE_NAME, SERVICE_VERSION } from '../service-info';
import { prebuiltWorkflowBundlePath } from './worker';

/*
 * Worker Versioning (docs/delivery.md#releases-and-running-workflows; the deploy: docs/deploying.md). The delivery workers of a release form one Worker Deployment Version: the deployment is named after the
 * task queue, the build id names the release. Temporal runs each pinned workflow on the version it started on and
 * every new one on the deployment's current version, which the deploy sets.
 */

/** Where `npm run build` leaves the build id it made (scripts/bundle-workflows.ts): dist/build-id. */
export const BUILD_ID_FILE = path.join(path.dirname(prebuiltWorkflowBundlePath), 'build-id');

/**
 * `<version>+<commit>` for a build made from a clean checkout of that commit (or given GIT_COMMIT, as the Docker build
 * is, which has no .git); otherwise `<version>+wf-<hash of the workflow bundle>`, which changes with the workflow
 * code however the build was made.
 */
export function buildIdOf(version: string, { commit, workflowBundle }: { commit?: string; workflowBundle: string }): string {
  if (commit) return `${version}+${commit.slice(0, 12)}`;
  return `${version}+wf-${createHash('sha256').update(workflowBundle).digest('hex').slice(0, 12)}`;
}

/**
 * The version a delivery worker serves: BUILD_ID when set, else what the build wrote, else (running from the
 * TypeScript sources, not built) `<version>+source`.
 */
export function deliveryWorkerDeployment(taskQueue: string, buildId: string | undefined): WorkerDeploymentVersion {
  const built = existsSync(BUILD_ID_FILE) ? readFileSync(BUILD_ID_FILE, 'utf8').trim() : undefined;
  return { deploymentName: taskQueue, buildId: buildId ?? (built || `${SERVICE_VERSION}+source`) };
}

/** Whether this worker's version is the current one of its deployment, as last seen. */
export interface CurrentVersionWatch {
  isCurrent: () => boolean;
  stop: () => void;
}

export const WATCH_INTERVAL_MS = 2_000;
/** gRPC status codes: the deployment is not registered yet; another worker changed it since this one read it. */
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;

/**
 * Follows whether `version` is its deployment's current version, every two seconds (the relay starts workflows
 * eagerly only then: Temporal hands an eager start to the worker that asked, whatever version is current). A
 * deployment that never had a current version (a new installation, or the first release with Worker Versioning
 * after unversioned workers) gets this one: its first version becomes current by itself, every later one by the
 * deploy. Errors (Temporal away, the deployment not registered until the first poll) are retried at the next look.
 */
export function watchCurrentVersion(client: Client, version: WorkerDeploymentVersion, log: Logger): CurrentVersionWatch {
  const { namespace } = client.options;
  const { deploymentName, buildId } = version;
  let current = false;
  // What the log said last: nothing until the first look that answers, which logs either way.
  let reported: boolean | undefined;
  let stopped = false;

  const look = async () => {
    const { conflictToken, workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({ namespace, deploymentName });
    const routing = workerDeploymentInfo?.routingConfig;
    if (!routing?.currentDeploymentVersion && !routing?.currentVersionChangedTime) {
      // conflictToken: if another worker of the deployment set one meanwhile, this call fails and the next look sees it.
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName,
        buildId,
        conflictToken,
        identity: `${SERVICE_NAME} worker ${buildId}: the deployment's first version`,
      });
      log.info({ deploymentName, buildId }, 'worker deployment had no current version; this one is current now');
      current = reported = true;
      return;
    }
    const currentBuildId = routing.currentDeploymentVersion?.buildId ?? null;
    const isCurrent = currentBuildId === buildId;
    current = isCurrent;
    if (isCurrent === reported) return;
    reported = isCurrent;
    if (isCurrent) {
      log.info({ deploymentName, buildId, current: true }, 'this worker version is current');
      return;
    }
    // A warning, also at a start: until this version is made current, new deliveries start on the current one, and
    // wait there should its workers be gone (a release started after its predecessor was stopped).
    log.warn(
      { deploymentName, buildId, current: false, currentBuildId },
      'this worker version is not current: new deliveries start on the current version until this one is made current (docs/deploying.md)',
    );
  };

  // Logged once until the next good look: a server without Worker Deployments would otherwise log every 2 s.
  let lastProblem: string | undefined;
  const loop = async () => {
    while (!stopped) {
      await look().then(
        () => (lastProblem = undefined),
        (err: unknown) => {
          if (stopped) return;
          if (isGrpcServiceError(err) && (err.code === NOT_FOUND || err.code === FAILED_PRECONDITION)) return;
          current = false;
          if (lastProblem === String(err)) return;
          lastProblem = String(err);
          log.warn({ err, deploymentName, buildId }, 'could not read the worker deployment; workflow starts are not eager meanwhile');
        },
      );
      await new Promise((resolve) => setTimeout(resolve, WATCH_INTERVAL_MS).unref());
    }
  };
  void loop();
  return {
    isCurrent: () => current,
    stop: () => {
      stopped = true;
    },
  };
}
