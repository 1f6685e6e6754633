import type { WebhookData } from '../schemas/payload-schemas';

/**
 * The `data` of one event, and the key of what it describes within its cause (`checkout:<number>` for a whole
 * payment, `donation:<number>` for one position); with the event type it makes the event's idempotency key.
 * `data` is typed by the payload schemas (src/webhooks/schemas/), so renderers and schemas name the same fields.
 */
export interface RenderedEvent<Data extends WebhookData = WebhookData> {
  key: string;
  data: Data;
}
