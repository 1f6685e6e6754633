export { deliverEvent, type DeliverEventInput } from './deliver-event';
export { deliveryStateQuery, type DeliveryState, resendSignal } from './delivery';
export { resendEvent, type ResendEventInput } from './resend-event';
export { resumeDelivery, type ResumeDeliveryInput } from './resume-delivery';
export { purgeEndedEvents, type PurgeEndedEventsInput, purgeProgressQuery } from './purge-events';
export { recoverDeliveries, type RecoverDeliveriesInput, recoveryProgressQuery } from './recover-deliveries';
export { VERSIONING_BEHAVIOURS } from './versioning';
