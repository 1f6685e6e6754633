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
