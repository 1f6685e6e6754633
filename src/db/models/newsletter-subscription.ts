import type { Gender } from '../../shared/donor-fields';
import { BaseModel } from './base';

export class NewsletterSubscriptionModel extends BaseModel {
  static tableName = 'newsletter_subscriptions';
  id!: number;
  contact_id!: number | null;
  /** Empty when unknown; written only through the platform's validated input. */
  gender!: Gender | '';
  first_name!: string | null;
  last_name!: string | null;
  email!: string;
  language!: string;
  channel!: string;
  confirmed_at!: Date | null;
  created_at!: Date;
}
