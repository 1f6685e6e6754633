import type { User } from '../users/user-store';
import type { Config } from '../config';
import { temporalUiUrl } from '../temporal/ui';
import { DELIVERY_STATUS_LABELS, DELIVERY_STATUSES } from '../delivery-rules/delivery-status';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';
import { PAYLOAD_VERSIONS, versionNeedsCartLogic } from '../webhooks/payload-versions';

/**
 * What the admin page needs besides the data: who is signed in, the choices its forms and filters offer (so the
 * page repeats no list of the server's), where the Temporal UI shows an event's workflow, and which installation
 * (this database, migration 020) on which task queue its workers and workflows are.
 */
export function presentAdminInfo(config: Config, user: User, installation: string) {
  return {
    username: user.username,
    temporal_ui_url: temporalUiUrl(config),
    temporal_namespace: config.temporal.namespace,
    temporal_task_queue: config.temporal.taskQueue,
    installation_id: installation,
    statuses: DELIVERY_STATUSES.map((status) => ({ value: status, label: DELIVERY_STATUS_LABELS[status] })),
    stuck_after_minutes: config.webhooks.stuckAfterMinutes,
    event_types: WEBHOOK_EVENT_TYPES,
    payload_versions: PAYLOAD_VERSIONS.map((version) => ({
      value: version,
      // Chosen only with the shop's cart logic on; an endpoint that already has it keeps it (see endpoint-rules).
      selectable: config.platform.cartLogic || !versionNeedsCartLogic(version),
    })),
  };
}
