import { BaseModel } from './base';

export class NewsletterSubscriptionModel extends BaseModel {
  static tableName = 'newsletter_subscriptions';
  id!: number;
  contact_id!: number | null;
  gender!: string;
  first_name!: string | null;
  last_name!: string | null;
  email!: string;
  language!: string;
  channel!: string;
  confirmed_at!: Date | null;
  created_at!: Date;
}
