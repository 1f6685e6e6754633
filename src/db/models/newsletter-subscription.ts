import { BaseModel } from './base';
import { ContactModel } from './contact';

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
  contact?: ContactModel | null;

  static relationMappings = () => ({
    contact: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: ContactModel,
      join: { from: 'newsletter_subscriptions.contact_id', to: 'contacts.id' },
    },
  });
}
