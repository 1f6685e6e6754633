import type { Knex } from 'knex';
import * as m001 from './001_create_users_and_token_blacklist';
import * as m002 from './002_create_campaigns_and_links';
import * as m003 from './003_create_contacts';
import * as m004 from './004_create_checkouts_and_donations';
import * as m005 from './005_create_newsletter_subscriptions';
import * as m006 from './006_create_shop_orders';
import * as m007 from './007_create_webhook_endpoints_events_attempts';
import * as m008 from './008_notify_webhook_event_inserted';
import * as m009 from './009_store_donor_snapshot_on_checkouts';
import * as m010 from './010_create_login_failures';
import * as m011 from './011_maintain_contact_statistics';
import * as m012 from './012_count_login_failures_with_rate_limiter';
import * as m013 from './013_add_users_token_version';
import * as m014a from './014a_add_webhook_event_operator_columns';
import * as m014b from './014b_index_webhook_event_search_and_health';
import * as m015 from './015_add_webhook_event_relay_claims';
import * as m016 from './016_add_new_donations_to_contact_totals';
import * as m017 from './017_give_webhook_events_their_own_workflow_ids';
import * as m018 from './018_create_ended_sessions';
import * as m019 from './019_share_transaction_ids_cap_answers_unlink_foreign_sign_ups';
import * as m020 from './020_record_the_installation_id';
import * as m021 from './021_store_webhook_event_environment';
import * as m022 from './022_record_webhook_attempt_starts';
import * as m023 from './023_store_webhook_event_trace_context';
import * as m024 from './024_count_webhook_events_by_status';
import * as m025 from './025_notify_webhook_event_facts';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/**
 * Migrations listed explicitly so that the same list runs from TypeScript (tests) and compiled JavaScript (dist),
 * with no directory scan that depends on file extensions. Each by its file name, in the order the names sort, which
 * is the order they run. Append only; the rule for what a migration may change: docs/deploying.md#schema-changes-expand-deploy-contract.
 */
const migrations: ReadonlyArray<[string, Migration]> = [
  ['001_create_users_and_token_blacklist', m001],
  ['002_create_campaigns_and_links', m002],
  ['003_create_contacts', m003],
  ['004_create_checkouts_and_donations', m004],
  ['005_create_newsletter_subscriptions', m005],
  ['006_create_shop_orders', m006],
  ['007_create_webhook_endpoints_events_attempts', m007],
  ['008_notify_webhook_event_inserted', m008],
  ['009_store_donor_snapshot_on_checkouts', m009],
  ['010_create_login_failures', m010],
  ['011_maintain_contact_statistics', m011],
  ['012_count_login_failures_with_rate_limiter', m012],
  ['013_add_users_token_version', m013],
  ['014a_add_webhook_event_operator_columns', m014a],
  ['014b_index_webhook_event_search_and_health', m014b],
  ['015_add_webhook_event_relay_claims', m015],
  ['016_add_new_donations_to_contact_totals', m016],
  ['017_give_webhook_events_their_own_workflow_ids', m017],
  ['018_create_ended_sessions', m018],
  ['019_share_transaction_ids_cap_answers_unlink_foreign_sign_ups', m019],
  ['020_record_the_installation_id', m020],
  ['021_store_webhook_event_environment', m021],
  ['022_record_webhook_attempt_starts', m022],
  ['023_store_webhook_event_trace_context', m023],
  ['024_count_webhook_events_by_status', m024],
  ['025_notify_webhook_event_facts', m025],
];

/**
 * Files renamed after they were applied, so that their names sort in the order they always ran (012 was missing,
 * 013 and 014 were taken twice), and the name knex_migrations holds for each: the one it was first applied under.
 * A database keeps its rows as they are, and an earlier release, which knows only those names, still finds every
 * migration it applied (knex refuses to migrate a database that recorded a name it does not know).
 */
const APPLIED_UNDER: Readonly<Record<string, string>> = {
  '012_count_login_failures_with_rate_limiter': '013_count_login_failures_with_rate_limiter',
  '014a_add_webhook_event_operator_columns': '014_add_webhook_event_operator_columns',
  '014b_index_webhook_event_search_and_health': '014_index_webhook_event_search_and_health',
};

/** The file name of every migration, in the order they run. */
export const migrationFiles: readonly string[] = migrations.map(([file]) => file);

/** The name knex_migrations records for a migration file. */
export const appliedName = (file: string): string => APPLIED_UNDER[file] ?? file;

export const migrationSource: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => [...migrations],
  getMigrationName: ([file]) => appliedName(file),
  getMigration: async ([, migration]) => migration,
};
