import { BaseModel } from './base';

export type PayloadVersion = 'v1' | 'v2' | 'v2.1';

export class WebhookEndpointModel extends BaseModel {
  static tableName = 'webhook_endpoints';
  id!: number;
  platform!: string;
  url!: string;
  active!: boolean;
  payload_version!: PayloadVersion;
  events!: string[];
  basic_auth_username!: string | null;
  basic_auth_password!: string | null;
  signing_secret!: string | null;
  created_at!: Date;
  updated_at!: Date;
}
