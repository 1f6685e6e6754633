import { Model } from 'objection';

/** Columns are snake_case in the database and in the models alike, so a model reads as its table does. */
export class BaseModel extends Model {}
