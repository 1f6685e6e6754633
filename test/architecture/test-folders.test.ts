import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { importsIn, ROOT } from './import-graph';

/*
 * test/ mirrors the code (docs/architecture.md): a test lives in the folder named like the folder (or top
 * module) of the code it is about, and its kind shows in its name, never in a folder. So a new test has one place,
 * and a renamed folder of src/ cannot leave its tests behind under the old name.
 */

/** Code beside src/ with tests of its own, tested under test/ by the same name. */
const BESIDE_SRC = ['activities', 'bench', 'deploy', 'drills', 'examples', 'migrations', 'stack', 'workflows'];

/** The folders of test/ that mirror no code: rules over the whole tree, the one harness, programs tests start. */
const OF_THE_TESTS = ['architecture', 'fixtures', 'support'];

/** The browser tests' harness: whoever imports it is a browser test, named so. */
const BROWSER = 'test/support/browser.ts';

/** `src/http/` → `http`, `src/config.ts` → `config`. */
function sourceAreas(): string[] {
  return readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')))
    .map((entry) => entry.name.replace(/\.ts$/, ''));
}

/** Every file under test/, relative to the root. */
function testFiles(): string[] {
  return readdirSync(path.join(ROOT, 'test'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** Why a file of test/ is out of place by the rule; undefined when it is where the rule puts it. */
function misplaced(file: string, folders: readonly string[], browserTests: ReadonlySet<string>): string | undefined {
  const parts = file.split('/');
  if (parts.length < 3) return `${file} lies at test/'s root: put it in the folder named like the code it tests`;
  const folder = parts[1];
  if (!folders.includes(folder)) return `${file}: test/${folder}/ is named like no folder of src/ (nor ${BESIDE_SRC.join(', ')}, ${OF_THE_TESTS.join(', ')})`;
  const name = parts[parts.length - 1];
  if (name.endsWith('.stack.ts') && folder !== 'stack') return `${file}: the stack suite's tests (*.stack.ts) live in test/stack/`;
  const isTest = name.endsWith('.test.ts');
  if (isTest && ['fixtures', 'support'].includes(folder)) return `${file}: test/${folder}/ holds no tests, only what tests share`;
  if (browserTests.has(file) && !name.endsWith('.e2e.test.ts')) return `${file} drives the browser: name it *.e2e.test.ts`;
  if (name.endsWith('.e2e.test.ts') && !browserTests.has(file)) return `${file} does not drive the browser: name it *.test.ts`;
  return undefined;
}

describe('test folders', () => {
  const folders = [...sourceAreas(), ...BESIDE_SRC, ...OF_THE_TESTS];

  test('every file of test/ sits in the folder named like the code it tests, its kind in its name', () => {
    const browserTests = new Set(importsIn(['test']).flatMap(({ from, to }) => (to === BROWSER ? [from] : [])));
    expect(testFiles().flatMap((file) => misplaced(file, folders, browserTests) ?? [])).toEqual([]);
  });

  test('the folders beside src/ that test/ mirrors exist', () => {
    expect(BESIDE_SRC.filter((folder) => !existsSync(path.join(ROOT, folder)))).toEqual([]);
  });

  test('a test at the root, in a folder named for its kind or for code that is gone, or misnamed for its kind, is named', () => {
    const browser = new Set(['test/admin/page.test.ts']);
    expect(
      ['test/money.test.ts', 'test/unit/money.test.ts', 'test/admin/page.test.ts', 'test/http/headers.e2e.test.ts', 'test/support/x.test.ts', 'test/api/a.stack.ts'].map(
        (file) => misplaced(file, folders, browser),
      ),
    ).toEqual([
      "test/money.test.ts lies at test/'s root: put it in the folder named like the code it tests",
      expect.stringMatching(/^test\/unit\/money\.test\.ts: test\/unit\/ is named like no folder of src\//),
      'test/admin/page.test.ts drives the browser: name it *.e2e.test.ts',
      'test/http/headers.e2e.test.ts does not drive the browser: name it *.test.ts',
      'test/support/x.test.ts: test/support/ holds no tests, only what tests share',
      "test/api/a.stack.ts: the stack suite's tests (*.stack.ts) live in test/stack/",
    ]);
    expect(['test/shared/money.test.ts', 'test/config/strictness.test.ts', 'test/workflows/replay.test.ts'].map((file) => misplaced(file, folders, browser))).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});
