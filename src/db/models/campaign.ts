import { BaseModel } from './base';

export class CampaignModel extends BaseModel {
  static tableName = 'campaigns';
  id!: number;
  title!: string;
  created_at!: Date;
}

export interface CampaignLinkCustomField {
  name: string;
  type: 'text' | 'checkbox';
  label: string;
  required: boolean;
}

export class CampaignLinkModel extends BaseModel {
  static tableName = 'campaign_links';
  id!: string;
  campaign_id!: number;
  active!: boolean;
  currency!: string;
  amounts_minor!: number[];
  default_amount_minor!: number;
  minimum_amount_minor!: number;
  payment_methods!: string[];
  purposes!: string[];
  recurring_enabled!: boolean;
  recurring_intervals!: string[];
  custom_fields!: CampaignLinkCustomField[];
  cover_fees!: boolean;
}
