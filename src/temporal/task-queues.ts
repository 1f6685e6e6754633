/** The one task queue the delivery workers poll; kept in one place so client and worker cannot disagree. */
export const DEFAULT_TASK_QUEUE = 'webhook-delivery';
