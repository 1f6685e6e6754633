import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { projectRoot } from '../src/config';
import { SERVICE_VERSION } from '../src/service-info';
import { WORKFLOW_INTERCEPTORS_MODULE } from '../src/observability/tracing/temporal-interceptors';
import { deliveryWorkflowsPath, prebuiltTracedWorkflowBundlePath, prebuiltWorkflowBundlePath } from '../src/temporal/worker';
import { BUILD_ID_FILE, buildIdOf } from '../src/temporal/worker-deployment';

/** The commit this build is made from: GIT_COMMIT (the Docker build, which has no .git), or a clean checkout's HEAD. */
function builtCommit(): string | undefined {
  if (process.env.GIT_COMMIT) return process.env.GIT_COMMIT;
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    // Uncommitted changes: the commit does not say what was built.
    return git('status', '--porcelain') === '' ? git('rev-parse', 'HEAD') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Part of `npm run build`: bundles the compiled delivery workflows once, so that a worker process loads the bundle
 * instead of running webpack at every start (seconds of CPU and some 70 MB of resident memory it never gives back),
 * and writes the build id a versioned worker serves unless BUILD_ID says otherwise (src/temporal/worker-deployment.ts).
 * A second bundle has the OpenTelemetry workflow interceptors compiled in, for workers that trace; the build id is
 * the first's: both run the same workflows, and the interceptors add nothing to a workflow's history.
 */
async function main() {
  const { code } = await bundleWorkflowCode({ workflowsPath: deliveryWorkflowsPath, logger: new DefaultLogger('WARN') });
  await writeFile(prebuiltWorkflowBundlePath, code);
  const traced = await bundleWorkflowCode({
    workflowsPath: deliveryWorkflowsPath,
    workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_MODULE],
    logger: new DefaultLogger('WARN'),
  });
  await writeFile(prebuiltTracedWorkflowBundlePath, traced.code);
  const buildId = buildIdOf(SERVICE_VERSION, { commit: builtCommit(), workflowBundle: code });
  await writeFile(BUILD_ID_FILE, `${buildId}\n`);
  process.stdout.write(`workflow bundle: ${prebuiltWorkflowBundlePath} (${(code.length / 1024 / 1024).toFixed(2)} MB), build id ${buildId}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
