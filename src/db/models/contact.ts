import type { Gender } from '../../shared/donor-fields';
import { BaseModel } from './base';

export type Environment = 'TEST' | 'PRODUCTION';

export class ContactModel extends BaseModel {
  static tableName = 'contacts';
  id!: number;
  environment!: Environment;
  /** Written only through the platform's validated input. */
  gender!: Gender;
  first_name!: string;
  last_name!: string;
  email!: string;
  company!: string | null;
  po_box!: string | null;
  street!: string;
  street_number!: string;
  postal_code!: string;
  city!: string;
  country!: string;
  language!: string;
  newsletter!: boolean;
  custom_fields!: Record<string, string | boolean>;
  created_at!: Date;
  updated_at!: Date;
}
