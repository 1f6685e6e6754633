// The admin API's answers as the page reads them: the server's own response schemas (src/admin/response-schemas.ts),
// so that a field the API renames or drops fails the page's type check instead of showing up empty. Types only; the
// browser never loads this file.

import type { z } from 'zod';
import type * as schemas from '../response-schemas';

export type AdminInfo = z.output<typeof schemas.adminInfoSchema>;
export type WebhookEndpoint = z.output<typeof schemas.webhookEndpointSchema>;
export type WebhookEventPage = z.output<typeof schemas.webhookEventPageSchema>;
export type WebhookEventSummary = WebhookEventPage['results'][number];
export type WebhookEventDetail = z.output<typeof schemas.webhookEventDetailSchema>;
export type ResendAccepted = z.output<typeof schemas.resendAcceptedSchema>;
export type RecoveryPreview = z.output<typeof schemas.recoveryPreviewSchema>;
export type Recovery = z.output<typeof schemas.recoverySchema>;
export type TestEventCreated = z.output<typeof schemas.testEventCreatedSchema>;
export type DeliveryHealth = z.output<typeof schemas.deliveryHealthSchema>;

/** What the token endpoints answer (`POST /authentication/create`, `/authentication/refresh`). */
export interface Tokens {
  access: string;
  refresh: string;
}
