import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

// The Prometheus alert rules we ship (deploy/prometheus/alerts/) must load, and behave as their unit tests
// (test/deploy/prometheus/*.test.yml) say, checked by Prometheus' own promtool (scripts/install-promtool.sh).

const root = path.resolve(__dirname, '../..');
const ALERTS = path.join(root, 'deploy/prometheus/alerts');
const RULE_TESTS = path.join(__dirname, 'prometheus');

const filesIn = (folder: string, suffix: string) =>
  readdirSync(folder)
    .filter((file) => file.endsWith(suffix))
    .sort()
    .map((file) => path.join(folder, file));

const promtool = (args: string[], cwd = root) => spawnSync('promtool', args, { cwd, encoding: 'utf8', timeout: 60_000 });

/**
 * Whether promtool can run. In CI (CI=true) a missing promtool is an error, so that the rules cannot pass unchecked;
 * on a developer's machine the tests are skipped with a loud warning.
 */
function promtoolAvailable(): boolean {
  if (!promtool(['--version']).error) return true;
  const message = 'promtool not found on the PATH; install it with: bash scripts/install-promtool.sh';
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n${'!'.repeat(100)}\nSKIPPING the alert rule checks. ${message}\n${'!'.repeat(100)}\n`);
  return false;
}

const describeWithPromtool = promtoolAvailable() ? describe : describe.skip;

describeWithPromtool('Prometheus alert rules', () => {
  const ruleFiles = filesIn(ALERTS, '.yml');

  test('there are rules, and every file in deploy/prometheus/alerts/ passes promtool check rules', () => {
    expect(ruleFiles.map((file) => path.basename(file))).toContain('delivery.yml');
    for (const file of ruleFiles) {
      const result = promtool(['check', 'rules', file]);
      expect([path.relative(root, file), result.status, result.stdout + result.stderr]).toEqual([path.relative(root, file), 0, expect.stringContaining('SUCCESS')]);
    }
  });

  test.each(filesIn(RULE_TESTS, '.test.yml').map((file) => [path.basename(file), file]))('%s passes promtool test rules', (_name, file) => {
    // Rule files are named relative to the test file's folder.
    const result = promtool(['test', 'rules', path.basename(file)], RULE_TESTS);
    expect([result.status, result.stdout + result.stderr]).toEqual([0, expect.stringContaining('SUCCESS')]);
  });
});
