import type { Knex } from 'knex';
import type { Config } from '../config';

/** What every platform command needs besides its transaction and input. */
export interface PlatformContext {
  /** The time the command records as "now"; the demo seeder passes past times to spread its data. */
  now(): Date;
  platform: Config['platform'];
}

/** The result of an idempotent command: `created` is false when the natural key already existed. */
export interface CommandResult<T> {
  created: boolean;
  record: T;
}

/** A command of the write side: reads and writes its rows in the caller's transaction and answers with its record. */
export type PlatformCommand<Input, Output> = (trx: Knex.Transaction, input: Input, ctx: PlatformContext) => Promise<CommandResult<Output>>;
