/*
 * What the releases still running somewhere shipped, which today's code must keep working with during a deploy
 * (docs/deploying.md). When a release is cut: record its histories (`npm run
 * histories:record` after raising the version in package.json) and add it to both lists below.
 */

/**
 * Releases whose workflows may still be running when today's code takes them over: every history they recorded must
 * replay on today's workflow code (test/temporal/replay.test.ts). A release leaves this list once no workflow it
 * started can run anywhere.
 */
export const SUPPORTED_RELEASES: readonly string[] = ['0.1.0', '0.2.0'];

/**
 * The last migration (file name) each release shipped. The migrations after the newest one are this release's own,
 * and while the previous release runs against them they must not take away what it reads or writes
 * (test/migrations/migrations-rule.test.ts).
 */
export const LAST_MIGRATION_OF_RELEASE: Readonly<Record<string, string>> = {
  '0.1.0': '016_add_new_donations_to_contact_totals',
  '0.2.0': '021_store_webhook_event_environment',
};
