import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIGURATION_DOC, renderConfigurationDoc } from '../../scripts/configuration-doc';
import { environmentSchema, projectRoot } from '../../src/config-variables';
import { sourceFiles } from '../architecture/import-graph';

/*
 * The settings reference cannot drift from the code: docs/configuration.md is what `npm run docs:config` renders from
 * src/config-variables.ts, that list is every variable the service reads, and each has its meaning.
 */

const variables = Object.keys(environmentSchema.shape);

test('docs/configuration.md is what `npm run docs:config` renders from src/config-variables.ts', () => {
  const committed = readFileSync(CONFIGURATION_DOC, 'utf8');
  // On a difference: run `npm run docs:config` and commit docs/configuration.md.
  expect(committed).toBe(renderConfigurationDoc());
});

test('every variable has a row, and its meaning', () => {
  const doc = renderConfigurationDoc();
  expect(variables.filter((name) => !doc.includes(`<a id="${name.toLowerCase()}"></a>\`${name}\` |`))).toEqual([]);
  expect(variables.filter((name) => !environmentSchema.shape[name as keyof typeof environmentSchema.shape].description)).toEqual([]);
});

// The OpenID Provider the Temporal UI signs in at is a program of its own that shares the image, with its own settings
// (src/oidc-provider/settings.ts), read by its entry.
const OWN_PROGRAMS = ['src/oidc-provider/main.ts'];

test('only src/config.ts reads the environment, and it reads every variable of the list', () => {
  const code = ['src', 'activities', 'workflows'].flatMap(sourceFiles);
  const readers = code.filter((file) => /\bprocess\.env\b|\bprocess\[['"]env['"]\]/.test(readFileSync(path.join(projectRoot, file), 'utf8')));
  expect(readers).toEqual(['src/config.ts', ...OWN_PROGRAMS]);
  const config = readFileSync(path.join(projectRoot, 'src/config.ts'), 'utf8');
  expect(variables.filter((name) => !new RegExp(`\\be\\.${name}\\b`).test(config))).toEqual([]);
});
