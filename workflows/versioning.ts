import type { VersioningBehavior, WorkflowDefinitionOptions } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { deliverEvent } from './deliver-event';
import { purgeEndedEvents } from './purge-events';
import { recoverDeliveries } from './recover-deliveries';
import { resendEvent } from './resend-event';
import { resumeDelivery } from './resume-delivery';

/**
 * How each workflow type moves between releases under Worker Versioning
 * (docs/delivery.md#releases-and-running-workflows). Pinned: it finishes on the release it started on, whose workers
 * run until it has (a delivery lives at most 5 h 20 min, a resend run seconds; a resumed delivery at most what is
 * left of its schedule). Auto-Upgrade: its next workflow task runs on the current release, which must replay its history (test/temporal/replay.test.ts): a recovery or a purge may run for hours and would otherwise
 * keep the previous release running as long.
 */
export const VERSIONING_BEHAVIOURS = {
  deliverEvent: 'PINNED',
  resendEvent: 'PINNED',
  resumeDelivery: 'PINNED',
  recoverDeliveries: 'AUTO_UPGRADE',
  purgeEndedEvents: 'AUTO_UPGRADE',
} as const satisfies Record<string, VersioningBehavior>;

/**
 * The behaviour, declared only on a versioned worker: Temporal refuses the workflow task of an unversioned one
 * (`npm start`, the tests) that names one. Asked when the run starts on a worker; a run begun by an unversioned
 * worker (release 0.1.0) gets the versioned worker's default, Pinned, once it moves there.
 */
const onVersionedWorkers =
  (versioningBehavior: VersioningBehavior) => (): WorkflowDefinitionOptions => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior } : {});

setWorkflowOptions(onVersionedWorkers(VERSIONING_BEHAVIOURS.deliverEvent), deliverEvent);
setWorkflowOptions(onVersionedWorkers(VERSIONING_BEHAVIOURS.resendEvent), resendEvent);
setWorkflowOptions(onVersionedWorkers(VERSIONING_BEHAVIOURS.resumeDelivery), resumeDelivery);
setWorkflowOptions(onVersionedWorkers(VERSIONING_BEHAVIOURS.recoverDeliveries), recoverDeliveries);
setWorkflowOptions(onVersionedWorkers(VERSIONING_BEHAVIOURS.purgeEndedEvents), purgeEndedEvents);
