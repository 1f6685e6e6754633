import type { Client as TemporalClient } from '@temporalio/client';
import type { PasswordChecks } from './auth/password-checks';
import type { Clock, TokenSettings } from './auth/tokens';
import type { Config } from './config';
import type { Db } from './db/knex';
import { type Operation as KitOperation, type OperationGroup as KitOperationGroup, operationsReceiving } from './http/operation';
import type { Logger } from './logger';
import type { Metrics } from './observability/metrics';
import type { TemporalSdkMetrics } from './temporal/sdk-runtime';
import type { ResolveHost } from './webhooks/subscriber-address';

export interface AppDependencies {
  db: Db;
  config: Config;
  log: Logger;
  /** Seconds since the epoch; tests pass their own to move past token expiry. */
  clock?: Clock;
  /** For the admin resend; without it a resend answers 503. */
  temporalClient?: TemporalClient;
  /** The process's metrics (shared with its worker in the all-in-one role); a registry of its own otherwise. */
  metrics?: Metrics;
  /** The Temporal SDK's worker metrics, served after ours on /metrics, in the processes that run a worker. */
  temporalSdkMetrics?: TemporalSdkMetrics;
  /** DNS for the subscriber URL check; tests inject a table (default: the system resolver). */
  resolveHost?: ResolveHost;
}

/** What every operation's handler and guard receive (built by src/runtime/app.ts). */
export interface RouteContext extends AppDependencies {
  tokens: TokenSettings;
  /** Every password check (token creation and HTTP Basic): limits, scrypt slots and remembered credentials. */
  passwordChecks: PasswordChecks;
  metrics: Metrics;
  /** Now by the app's clock (the one tokens expire by): what the admin API and the platform commands date things with. */
  now: () => Date;
}

/** An operation of this app: its handler receives the route context. */
export type Operation = KitOperation<RouteContext>;
export type OperationGroup = KitOperationGroup<RouteContext>;

/** Declares an operation of this app (src/http/operation.ts says what a declaration holds). */
export const defineOperation = operationsReceiving<RouteContext>();
