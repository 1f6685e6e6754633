import type { EventSearchKeys } from '../event-search-keys';
import type { WebhookData } from '../schemas/payload-schemas';

/**
 * The `data` of one event, the key of what it describes within its cause (`checkout:<number>` for a whole payment,
 * `donation:<number>` for one position; with the event type it makes the event's idempotency key), and the keys the
 * admin finds it by, taken from that same `data`. `data` is typed by the payload schemas (src/webhooks/schemas/), so
 * renderers and schemas name the same fields.
 */
export interface RenderedEvent<Data extends WebhookData = WebhookData> {
  key: string;
  data: Data;
  searchKeys: EventSearchKeys;
}
