export { deliverEvent, deliverNowSignal, type DeliverEventInput } from './deliver-event';
export { resendEvent, type ResendEventInput } from './resend-event';
