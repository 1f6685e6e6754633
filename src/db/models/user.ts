import { BaseModel } from './base';

export class UserModel extends BaseModel {
  static tableName = 'users';
  id!: number;
  username!: string;
  password_hash!: string;
  is_staff!: boolean;
  is_active!: boolean;
  created_at!: Date;
}

export class RefreshTokenBlacklistModel extends BaseModel {
  static tableName = 'refresh_token_blacklist';
  static idColumn = 'jti';
  jti!: string;
  user_id!: number;
  expires_at!: Date;
  blacklisted_at!: Date;
}
