import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './import-graph';

/*
 * Jest runs many test files one after another in each of its worker processes. A Temporal client connection made
 * with the SDK's default retries, closed while a retry waits on its timer, throws "Channel has been shut down" from
 * that timer into the next file, which then fails to run (it failed a CI run twice). So every client connection a
 * test makes retries through src/temporal/closed-connection.ts: the test environments' plugin, or interceptors given.
 * The stack test (test/stack, its own Jest run, one file) is left as it is.
 */

/** Each `Connection.connect(…)` or `Connection.lazy(…)` call's argument text, up to its closing parenthesis. */
function connectionCalls(text: string): string[] {
  const calls: string[] = [];
  for (const match of text.matchAll(/(?<!Native)Connection\.(connect|lazy)\(/g)) {
    let depth = 1;
    let end = match.index + match[0].length;
    while (depth > 0 && end < text.length) {
      if (text[end] === '(') depth += 1;
      if (text[end] === ')') depth -= 1;
      end += 1;
    }
    calls.push(text.slice(match.index, end));
  }
  return calls;
}

test("every Temporal client connection the tests make fails a retry after it closed, rather than throwing into the next file", () => {
  const files = readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' }).filter(
    (file) => file.endsWith('.ts') && !file.startsWith(`stack${path.sep}`) && !file.startsWith(`architecture${path.sep}`),
  );
  const calls = files.flatMap((file) => connectionCalls(readFileSync(path.join(ROOT, 'test', file), 'utf8')).map((call) => ({ file, call })));
  expect(calls.length).toBeGreaterThan(3);
  expect(calls.filter(({ call }) => !/RETRIES_END_WITH_THE_CONNECTION|retriesEndingWithTheConnection/.test(call))).toEqual([]);
});

test('the test environments give their connections that plugin', () => {
  const support = readFileSync(path.join(ROOT, 'test', 'support', 'temporal.ts'), 'utf8');
  const environments = [...support.matchAll(/TestWorkflowEnvironment\.create\w+\(\{[\s\S]*?\n {2}\}\)/g)].map((match) => match[0]);
  expect(environments).toHaveLength(2);
  for (const environment of environments) expect(environment).toContain('plugins: [RETRIES_END_WITH_THE_CONNECTION]');
});
