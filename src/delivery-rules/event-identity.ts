/**
 * How an event and its delivery workflows know each other. Event ids are unique in one database only (a restored
 * older backup hands them out again; two databases may share a Temporal namespace), so an event carries a random key
 * of its own (`webhook_events.uuid`, migration 017), and every workflow started for it carries that key in its memo.
 * A workflow found under the event's workflow id is the event's own only when the keys agree.
 */
export interface EventIdentity {
  eventId: number;
  /** The event's random key (a UUID), the same in every copy of its row. */
  key: string;
  /** Its delivery workflow's id, as stored with the event: `webhook-event-<id>-<8 hex digits of the key>`, or legacy. */
  workflowId: string;
}

/** The memo field every delivery, resend and resumed run carries. */
export const EVENT_KEY_MEMO = 'webhookEventKey';

export const memoOf = ({ key }: Pick<EventIdentity, 'key'>) => ({ [EVENT_KEY_MEMO]: key });

/** The workflow id of an event whose delivery started before migration 017: the event id alone, no key in the memo. */
export const legacyWorkflowId = (eventId: number) => `webhook-event-${eventId}`;

/**
 * Whether a workflow found under the event's workflow id is the event's own: its memo holds the event's key. A
 * workflow without a key is the event's only under a legacy id (started before keys existed); under a new id it is
 * another event's, which merely collides.
 */
export function isOwnWorkflow(memo: Record<string, unknown> | undefined, identity: EventIdentity): boolean {
  const key = memo?.[EVENT_KEY_MEMO];
  if (key === undefined) return identity.workflowId === legacyWorkflowId(identity.eventId);
  return key === identity.key;
}

/**
 * Whose event a delivery workflow is for, carried in its input (workflows started since migration 020): this
 * database's installation id and the event's key. Workflows started before carry none (`owner` undefined).
 */
export interface DeliveryOwner {
  installation: string;
  key: string;
}

/** What the attempt finds in this database: its installation, and the event's key if the event exists. */
export interface AttemptSite {
  installation: string;
  eventKey?: string;
}

/**
 * Why a workflow asking to send or record an attempt of event `eventId` is not that event's (undefined: it is, or
 * nothing says otherwise): its input names another installation (another database on the namespace and task queue)
 * or another event key. A workflow without an owner in its input was started by a release before migration 020 (under
 * `webhook-event-<id>` by release 0.1.0): it is taken as the event's, as those releases did; a worker of another
 * database is kept off the task queue by the check at start (src/temporal/task-queue-installations.ts).
 */
export function foreignWorkflowReason(owner: DeliveryOwner | undefined, site: AttemptSite): string | undefined {
  if (!owner) return undefined;
  if (owner.installation !== site.installation) return `it belongs to installation ${owner.installation}, not to this one (${site.installation})`;
  if (site.eventKey !== undefined && owner.key !== site.eventKey) return `it carries event key ${owner.key}, not this event's (${site.eventKey})`;
  return undefined;
}
