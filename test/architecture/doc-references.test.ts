import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brokenReferences, githubSlug } from './doc-references';
import { ROOT } from './import-graph';

/*
 * Every pointer into the documents lands: markdown links between them, and the documents and anchors that code
 * comments, messages and configuration files name. A heading renamed or moved to another page fails here, naming
 * each place that still points to it.
 */

test('every link of the documents and every document named in code or configuration exists, with its anchor', () => {
  // This file's broken references are the examples below.
  expect(brokenReferences(ROOT, [path.relative(ROOT, __filename).split(path.sep).join('/')])).toEqual([]);
});

test('headings get the ids GitHub gives them', () => {
  expect(
    [
      'The embedded default (`npm start`)',
      'JWT_SECRETS (API tokens)',
      "Restoring the application's database",
      'Resend (`POST /admin/api/webhook-events/<id>/resend`)',
      '2. Isolation: 10,000 events in backoff',
      'Temporal UI → Deployments',
      'Read [the API](api.md) *now*',
      'Zürich <br> Öffnungszeiten',
    ].map(githubSlug),
  ).toEqual([
    'the-embedded-default-npm-start',
    'jwt_secrets-api-tokens',
    'restoring-the-applications-database',
    'resend-post-adminapiwebhook-eventsidresend',
    '2-isolation-10000-events-in-backoff',
    'temporal-ui--deployments',
    'read-the-api-now',
    'zürich--öffnungszeiten',
  ]);
});

describe('a tree with broken references', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'doc-references-'));
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    };
    write('docs/guide.md', ['# Guide', '', '## Retries (`src/retry.ts`)', '', '## Twice', '', '## Twice', '', 'See [the API](api.md).', ''].join('\n'));
    write('docs/api.md', '# API\n\n[back](guide.md#twice-1), [up](../README.md#readme), [gone](guide.md#thrice)\n');
    write(
      'README.md',
      [
        '# Readme',
        '[ok](docs/guide.md#retries-srcretryts) [missing](docs/missing.md) [anchor](docs/guide.md#retry)',
        '`[in code](docs/none.md)` [web](https://example.org/x.md)',
        '```',
        '[in a fence](docs/none.md)',
        '```',
        'As docs/guide.md, "Twice" says.',
      ].join('\n'),
    );
    write('src/retry.ts', ['// docs/guide.md#retries-srcretryts and docs/guide.md', '// docs/guide.md#retry, docs/gone.md', '// (docs/guide.md, "Retries"), README, "Guide"'].join('\n'));
    write('node_modules/x/README.md', '[not ours](nowhere.md)');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('are each named with where they are and why they do not land', () => {
    expect(brokenReferences(root)).toEqual([
      'README.md:2: docs/missing.md does not exist',
      'README.md:2: docs/guide.md has no heading with the anchor #retry',
      'README.md:7: cites docs/guide.md, "Twice" by its title: cite the heading\'s anchor instead (docs/guide.md#<anchor>)',
      'docs/api.md:3: docs/guide.md has no heading with the anchor #thrice',
      'src/retry.ts:2: docs/guide.md has no heading with the anchor #retry',
      'src/retry.ts:2: docs/gone.md does not exist',
      'src/retry.ts:3: cites docs/guide.md, "Retries" by its title: cite the heading\'s anchor instead (docs/guide.md#<anchor>)',
      'src/retry.ts:3: cites README, "Guide" by its title: cite the heading\'s anchor instead (README#<anchor>)',
    ]);
  });
});
