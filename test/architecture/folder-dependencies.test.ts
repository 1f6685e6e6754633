import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cyclesOf, type Import, importsIn, ROOT } from './import-graph';

/*
 * The folders and what each may import (docs/architecture.md): no cycle between folders, at any depth, and
 * every import between folders one its folder's rule allows. The file-level cycle rule is the lint's
 * (`import/no-cycle` in .oxlintrc.json); a cycle between folders can pass it, one file at a time.
 */

/** The aggregates: one folder each, with its store, types and rules. */
const AGGREGATES = [
  'src/campaign-links',
  'src/contacts',
  'src/donations',
  'src/newsletter',
  'src/shop',
  'src/users',
  'src/webhook-endpoint',
  'src/webhook-events',
];

/** What the aggregates build on; each may also import the others. */
const BELOW_AGGREGATES = ['src/db', 'src/shared', 'src/secrets', 'src/delivery-rules', 'src/webhooks', 'src/tracing.ts'];

/**
 * What each folder (or module at the top of src/) may import besides itself. The kit (src/http), the pure helpers
 * (src/shared) and the rules the workflows import (src/delivery-rules) stand below every feature.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  'src/shared': [],
  'src/delivery-rules': [],
  'src/http': ['src/shared', 'src/tracing.ts'],
  'src/config-variables.ts': [],
  'src/logger.ts': [],
  'src/tracing.ts': [],
  'src/secrets': [],
  'src/config.ts': ['src/config-variables.ts', 'src/secrets', 'src/shared'],
  'src/service-info.ts': ['src/config.ts'],
  migrations: [],
  'src/db': ['src/secrets', 'migrations'],
  'src/webhooks': ['src/shared', 'src/delivery-rules'],
  ...Object.fromEntries(AGGREGATES.map((aggregate) => [aggregate, [...BELOW_AGGREGATES, ...AGGREGATES]])),
  'src/auth': ['src/config.ts', 'src/db', 'src/shared', 'src/users'],
  'src/observability': ['src/config.ts', 'src/db', 'src/delivery-rules', 'src/http', 'src/logger.ts', 'src/shared', 'src/tracing.ts', 'src/webhooks', ...AGGREGATES],
  workflows: ['src/delivery-rules'],
  activities: [...BELOW_AGGREGATES, ...AGGREGATES, 'src/logger.ts', 'src/observability', 'src/service-info.ts'],
  'src/temporal': [
    'activities',
    'workflows',
    'src/config.ts',
    'src/db',
    'src/delivery-rules',
    'src/logger.ts',
    'src/observability',
    'src/service-info.ts',
    'src/shared',
    'src/tracing.ts',
    ...AGGREGATES,
  ],
  'src/route-context.ts': ['src/auth', 'src/config.ts', 'src/db', 'src/http', 'src/logger.ts', 'src/observability', 'src/temporal', 'src/webhooks'],
  'src/api': ['src/auth', 'src/http', 'src/route-context.ts', 'src/shared', 'src/webhooks', ...AGGREGATES],
  'src/platform': ['src/config.ts', 'src/http', 'src/route-context.ts', 'src/shared', 'src/webhooks', ...AGGREGATES],
  'src/admin': [
    'src/config.ts',
    'src/db',
    'src/delivery-rules',
    'src/http',
    'src/route-context.ts',
    'src/secrets',
    'src/shared',
    'src/temporal',
    'src/webhooks',
    ...AGGREGATES,
  ],
  'src/probes': ['src/db', 'src/http', 'src/logger.ts', 'src/route-context.ts', 'src/shared'],
  'src/runtime': [
    'src/admin',
    'src/api',
    'src/auth',
    'src/config.ts',
    'src/db',
    'src/http',
    'src/logger.ts',
    'src/observability',
    'src/platform',
    'src/probes',
    'src/route-context.ts',
    'src/secrets',
    'src/shared',
    'src/temporal',
    'src/tracing.ts',
    'src/webhooks',
  ],
  'src/demo': ['src/auth', 'src/config.ts', 'src/db', 'src/platform', 'src/secrets', 'src/shared', 'src/webhooks', ...AGGREGATES],
  'src/cli': ['src/auth', 'src/config.ts', 'src/db', 'src/secrets', ...AGGREGATES],
  'src/oidc-provider': ['src/logger.ts', 'src/secrets'],
  'src/main.ts': ['src/config.ts', 'src/observability', 'src/roles.ts', 'src/service-info.ts'],
  'src/roles.ts': ['src/config.ts', 'src/db', 'src/demo', 'src/logger.ts', 'src/observability', 'src/runtime', 'src/secrets', 'src/temporal', 'src/tracing.ts'],
};

const FOLDERS = ['src', 'activities', 'workflows', 'migrations'];

/**
 * The tooling beside the product, each a folder: stack/ starts and stops every topology run outside `npm start`,
 * bench/ and drills/ are scenarios on those topologies, scripts/ serves the build. Each may import the product; of
 * one another only what its entry names, and none of them test/ (the tests' harness is the tests').
 */
const TOOLING_MAY_IMPORT: Record<string, readonly string[]> = {
  stack: [],
  bench: ['stack'],
  drills: ['stack'],
  scripts: [],
};
const TOOLING = Object.keys(TOOLING_MAY_IMPORT);

/** The top-level folder a file belongs to: a folder of src/ (or a module at its top), activities/, workflows/, … */
function areaOf(file: string): string {
  const [top, second] = file.split('/');
  return top === 'src' ? `src/${second}` : top;
}

const describeImport = ({ from, specifier }: Import) => `${from} imports '${specifier}'`;

/** Each cycle, with one import that makes each of its edges. */
function foldersInCycles(imports: Import[], folderOf: (file: string) => string | undefined): string[] {
  const edges = new Map<string, Set<string>>();
  const example = new Map<string, Import>();
  for (const found of imports) {
    const [from, to] = [folderOf(found.from), folderOf(found.to)];
    if (from === undefined || to === undefined || from === to) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from)!.add(to);
    if (!example.has(`${from} ${to}`)) example.set(`${from} ${to}`, found);
  }
  return cyclesOf(edges).map((cycle) => {
    const within = [...example].filter(([edge]) => cycle.includes(edge.split(' ')[0]) && cycle.includes(edge.split(' ')[1]));
    return `${cycle.join(' ↔ ')}: ${within.map(([, found]) => describeImport(found)).join('; ')}`;
  });
}

/** Below `folder`: the child (folder or module) a file lies in; undefined outside it. */
const childOf = (folder: string) => (file: string) => {
  if (!file.startsWith(`${folder}/`)) return undefined;
  return `${folder}/${file.slice(folder.length + 1).split('/')[0]}`;
};

/** Every folder of these sources that holds a folder, at any depth (src/ itself is ruled by areaOf). */
function parentFolders(files: string[]): string[] {
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split('/').slice(0, -1);
    for (let depth = 1; depth < parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
  }
  folders.delete('src');
  return [...folders].sort();
}

/** Whether a tooling folder may import `to`: the product always, another tooling folder if its entry names it. */
function toolingRuleBroken(found: Import): string | undefined {
  const [from, to] = [areaOf(found.from), areaOf(found.to)];
  if (from === to || !(to in TOOLING_MAY_IMPORT || to === 'test')) return undefined;
  const allowed = TOOLING_MAY_IMPORT[from] ?? [];
  if (allowed.includes(to)) return undefined;
  return `${describeImport(found)}: of the tooling and test/, ${from} may import ${allowed.length > 0 ? `only ${allowed.join(', ')}` : 'nothing'}`;
}

/** Whether `to` may be imported from `from`, by the rules; every area needs a rule. */
function ruleBroken(found: Import): string | undefined {
  const [from, to] = [areaOf(found.from), areaOf(found.to)];
  if (from === to) return undefined;
  const allowed = MAY_IMPORT[from];
  if (allowed === undefined) return `${from} has no rule in MAY_IMPORT (${describeImport(found)})`;
  if (allowed.includes(to)) return undefined;
  return `${describeImport(found)}: ${from} may import only ${allowed.length > 0 ? allowed.join(', ') : 'nothing of ours'}`;
}

describe('folder dependencies', () => {
  const imports = importsIn(FOLDERS);
  const toolingImports = importsIn(TOOLING);

  test('no cycle between the folders of src/ (and its top modules), activities/, workflows/, migrations/, stack/, bench/, drills/ and scripts/', () => {
    expect(foldersInCycles([...imports, ...toolingImports], areaOf)).toEqual([]);
  });

  test('no cycle between the folders inside any folder, at any depth', () => {
    const all = [...imports, ...toolingImports];
    const files = [...new Set(all.flatMap(({ from, to }) => [from, to]))];
    const cycles = parentFolders(files).flatMap((folder) => foldersInCycles(all, childOf(folder)));
    expect(cycles).toEqual([]);
  });

  test('the tooling imports downwards: bench/ and drills/ may import stack/, stack/ and scripts/ no other tooling, none test/', () => {
    expect(toolingImports.flatMap((found) => toolingRuleBroken(found) ?? [])).toEqual([]);
  });

  test('an import of a scenario from the launcher, or of the tests\' harness from a bench, is named with the rule it breaks', () => {
    expect(toolingRuleBroken({ from: 'stack/stack.ts', to: 'bench/support/cli.ts', specifier: '../bench/support/cli' })).toBe(
      "stack/stack.ts imports '../bench/support/cli': of the tooling and test/, stack may import nothing",
    );
    expect(toolingRuleBroken({ from: 'bench/api.ts', to: 'test/support/free-port.ts', specifier: '../test/support/free-port' })).toBe(
      "bench/api.ts imports '../test/support/free-port': of the tooling and test/, bench may import only stack",
    );
    expect(toolingRuleBroken({ from: 'drills/stack.ts', to: 'stack/stack.ts', specifier: '../stack/stack' })).toBeUndefined();
    expect(toolingRuleBroken({ from: 'drills/stack.ts', to: 'src/config.ts', specifier: '../src/config' })).toBeUndefined();
  });

  test('every import between folders is one its folder may make (the kit, shared and delivery-rules import no feature)', () => {
    expect(imports.flatMap((found) => ruleBroken(found) ?? [])).toEqual([]);
  });

  test('a cycle between two folders is found, though no two files import each other', () => {
    const made: Import[] = [
      { from: 'src/http/a.ts', to: 'src/admin/b.ts', specifier: '../admin/b' },
      { from: 'src/admin/c.ts', to: 'src/http/d.ts', specifier: '../http/d' },
    ];
    expect(foldersInCycles(made, areaOf)).toEqual([
      "src/admin ↔ src/http: src/http/a.ts imports '../admin/b'; src/admin/c.ts imports '../http/d'",
    ]);
  });

  test('an import of a feature from the kit is named with the rule it breaks', () => {
    expect(ruleBroken({ from: 'src/http/app.ts', to: 'src/admin/operations.ts', specifier: '../admin/operations' })).toBe(
      "src/http/app.ts imports '../admin/operations': src/http may import only src/shared, src/tracing.ts",
    );
    expect(ruleBroken({ from: 'src/shared/money.ts', to: 'src/config.ts', specifier: '../config' })).toMatch(/may import only nothing of ours$/);
  });

  test('the map of the folders in docs/architecture.md states these rules', () => {
    expect(documentedRules()).toEqual(
      Object.fromEntries(
        Object.entries(MAY_IMPORT)
          .map(([folder, allowed]): [string, string[]] => [folder, allowed.filter((name) => name !== folder).sort()])
          .sort(([a], [b]) => a.localeCompare(b)),
      ),
    );
  });
});

/** `src/http/` → `src/http`; `src/<aggregate>/` → every aggregate. */
function pathsOf(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].flatMap(([, name]) => (name === 'src/<aggregate>/' ? AGGREGATES : [name.replace(/\/$/, '')]));
}

/** The "may import" column of the map of the folders, the first table of docs/architecture.md, by folder. */
function documentedRules(): Record<string, string[]> {
  const doc = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const table = doc.slice(doc.indexOf('\n|')).split('\n\n')[0];
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  const rules: Array<[string, string[]]> = rows.flatMap((row) => {
    const [folders, , allowed] = row.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, ''));
    return pathsOf(folders).map((folder): [string, string[]] => [folder, pathsOf(allowed).filter((name) => name !== folder).sort()]);
  });
  return Object.fromEntries(rules.sort(([a], [b]) => a.localeCompare(b)));
}
