/**
 * The `data` of one event, and the key of what it describes within its cause (`checkout:<number>` for a whole
 * payment, `donation:<number>` for one position); with the event type it makes the event's idempotency key.
 */
export interface RenderedEvent {
  key: string;
  data: Record<string, unknown>;
}
