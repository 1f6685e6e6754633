/*
 * The schema rule of a deploy (docs/deploying.md#schema-changes-expand-deploy-contract): the previous release runs against the migrated
 * schema until it is stopped, so a new migration only adds. What it must not do to what that release may read or
 * write, found in the source of its `up` (the `down` undoes it and may drop anything):
 */
const DESTRUCTIVE: ReadonlyArray<[RegExp, string]> = [
  [/\bDROP\s+(?:COLUMN|TABLE|VIEW|MATERIALIZED\s+VIEW|TYPE|SCHEMA)\b/i, 'drops a column, table, view, type or schema'],
  [/\bRENAME\b/i, 'renames'],
  [/\bALTER\s+COLUMN\b[^;]*?\bTYPE\b/i, 'changes the type of a column'],
  [/\bSET\s+NOT\s+NULL\b/i, 'makes a column NOT NULL'],
  [/\.(?:dropTable|dropTableIfExists|dropColumns?|dropNullables?)\(/, 'drops a table or column, or makes a column NOT NULL'],
  [/\.(?:renameColumn|renameTable)\(/, 'renames'],
  [/\.alter\(/, 'changes an existing column (type, nullability or default)'],
];

/** `ADD COLUMN …` up to the end of its definition: NOT NULL without a default fails the previous release's inserts. */
const ADDED_COLUMN_SQL = /\bADD\s+COLUMN\b[^,;'`"]*/gi;

/** The `up` function of a migration's source, without comments (which may mention anything). */
export function upSource(source: string): string {
  const start = source.search(/export\s+async\s+function\s+up\b/);
  const end = source.search(/export\s+async\s+function\s+down\b/);
  const up = source.slice(Math.max(start, 0), end > start ? end : undefined);
  return up
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
    .replace(/--.*$/gm, '');
}

/** What a migration's `up` does that breaks a release still running on the schema it changes. */
export function destructiveChanges(source: string): string[] {
  const up = upSource(source);
  const found = DESTRUCTIVE.filter(([pattern]) => pattern.test(up)).map(([, what]) => what);
  for (const [column] of up.matchAll(ADDED_COLUMN_SQL)) {
    if (/\bNOT\s+NULL\b/i.test(column) && !/\bDEFAULT\b/i.test(column)) found.push('adds a NOT NULL column without a default');
  }
  // Knex: a NOT NULL column added to an existing table (alterTable), not to one this migration creates.
  let table: 'new' | 'existing' = 'new';
  for (const statement of up.split(';')) {
    const altered = statement.lastIndexOf('alterTable(');
    const created = statement.lastIndexOf('createTable(');
    if (altered !== created) table = altered > created ? 'existing' : 'new';
    if (table === 'existing' && /\.notNullable\(\)/.test(statement) && !/\.defaultTo\(/.test(statement)) {
      found.push('adds a NOT NULL column without a default');
    }
  }
  return [...new Set(found)];
}

/**
 * A contract step says which release stopped reading or writing what it removes: `Contract step after release
 * 0.2.0`. It may run once every release still running is that one or newer.
 */
export function contractStepAfter(source: string): string | undefined {
  return /Contract step after release (\d+\.\d+\.\d+)/.exec(source)?.[1];
}

/**
 * A NOT NULL on a column the previous release never writes is safe when every insert of that release fills it (a
 * default or a trigger of the same migration). The migration says so, and how: `Filled for the previous release by
 * <how>`; a reviewer reads the claim, the test holds it to the one change it can excuse.
 */
const FILLED_FOR_PREVIOUS_RELEASE = /Filled for the previous release by \S.{9,}/;

/** Why a migration new in this release breaks the rule, given the releases cut so far; undefined when it keeps it. */
export function ruleBroken(source: string, releases: readonly string[]): string | undefined {
  const excused = FILLED_FOR_PREVIOUS_RELEASE.test(source) ? ['makes a column NOT NULL'] : [];
  const changes = destructiveChanges(source).filter((change) => !excused.includes(change));
  if (changes.length === 0) return undefined;
  const after = contractStepAfter(source);
  if (after === undefined) return `it ${changes.join(', ')}: not while the previous release runs (mark a contract step after the release that stopped using it)`;
  if (!releases.includes(after)) return `it is a contract step after release ${after}, which has not been cut (cut releases: ${releases.join(', ')})`;
  return undefined;
}
