import type { DeliveryStatus } from '../db/models';

export const DELIVERY_STATUSES = ['waiting', 'delivered', 'failed', 'max_retries_reached'] as const satisfies readonly DeliveryStatus[];

/** The German labels the admin shows for each delivery status. */
export const STATUS_LABELS: Record<DeliveryStatus, string> = {
  waiting: 'Wartend',
  delivered: 'Zugestellt',
  failed: 'Fehlgeschlagen',
  max_retries_reached: 'Maximale Wiederholungen erreicht',
};
