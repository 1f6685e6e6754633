import { BaseModel } from './base';

export type PayloadVersion = 'v1' | 'v2' | 'v2.1';
export type DeliveryStatus = 'waiting' | 'delivered' | 'failed' | 'max_retries_reached';

export class WebhookDeliveryAttemptModel extends BaseModel {
  static tableName = 'webhook_delivery_attempts';
  id!: number;
  event_id!: number;
  number!: number;
  manual!: boolean;
  started_at!: Date;
  duration_ms!: number;
  response_code!: number | null;
  response_body!: string | null;
  error!: string | null;
  outcome!: 'delivered' | 'failed';
}

export class WebhookEventModel extends BaseModel {
  static tableName = 'webhook_events';
  id!: number;
  endpoint_id!: number;
  event_type!: string;
  payload_version!: PayloadVersion;
  source_key!: string;
  payload!: string;
  status!: DeliveryStatus;
  attempts!: number;
  last_response_code!: number | null;
  last_response_body!: string | null;
  last_error!: string | null;
  next_attempt_at!: Date | null;
  delivered_at!: Date | null;
  workflow_started_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;
}
