import { writeFile } from 'node:fs/promises';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { deliveryWorkflowsPath, prebuiltWorkflowBundlePath } from '../src/temporal/worker';

/**
 * Part of `npm run build`: bundles the compiled delivery workflows once, so that a worker process loads the bundle
 * instead of running webpack at every start (seconds of CPU and some 70 MB of resident memory it never gives back).
 */
async function main() {
  const { code } = await bundleWorkflowCode({ workflowsPath: deliveryWorkflowsPath, logger: new DefaultLogger('WARN') });
  await writeFile(prebuiltWorkflowBundlePath, code);
  process.stdout.write(`workflow bundle: ${prebuiltWorkflowBundlePath} (${(code.length / 1024 / 1024).toFixed(2)} MB)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
