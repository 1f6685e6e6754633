export const WEBHOOK_EVENT_TYPES = [
  'donation.completed',
  'donation.recurring_completed',
  'donation.reconciled',
  'newsletter.subscribed',
  'shop_order.completed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Preselected on a new endpoint; the other two are opt-in, also on existing endpoints. */
export const DEFAULT_EVENT_SELECTION: readonly WebhookEventType[] = [
  'donation.completed',
  'donation.recurring_completed',
  'shop_order.completed',
];
