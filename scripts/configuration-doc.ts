import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { environmentSchema, FLAG_VALUES, projectRoot } from '../src/config-variables';

/*
 * `npm run docs:config`: writes docs/configuration.md from src/config-variables.ts, so that the settings reference is
 * the code's own list: each variable's type, default and limits as zod states them, its meaning from `.describe()`.
 * test/config/configuration-doc.test.ts fails while the committed file differs from what this renders.
 */

export const CONFIGURATION_DOC = path.join(projectRoot, 'docs/configuration.md');

/** A variable's JSON Schema, as far as it is read here. */
interface VariableSchema {
  type?: string;
  format?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  description?: string;
}

const code = (value: unknown) => `\`${String(value)}\``;

function typeOf(schema: VariableSchema): string {
  if (schema.enum && FLAG_VALUES.every((value) => schema.enum!.includes(value))) return 'boolean';
  if (schema.enum) return `one of ${schema.enum.map(code).join(', ')}`;
  if (schema.format === 'uri') return 'URL';
  return schema.type ?? 'string';
}

/** zod's integer bound stands for "no bound" on an unbounded integer. */
const bounded = (value: number | undefined) => (value === undefined || Math.abs(value) >= Number.MAX_SAFE_INTEGER ? undefined : value);

function range(min: number | undefined, max: number | undefined, unit = ''): string | undefined {
  if (min !== undefined && max !== undefined) return `${min}–${max}${unit}`;
  if (min !== undefined) return unit ? `at least ${min}${unit}` : `≥ ${min}`;
  if (max !== undefined) return unit ? `at most ${max}${unit}` : `≤ ${max}`;
  return undefined;
}

function limitsOf(schema: VariableSchema): string {
  const limits = [
    range(bounded(schema.minimum), bounded(schema.maximum)),
    schema.minLength === 1 && schema.maxLength === undefined ? 'not empty' : range(schema.minLength, schema.maxLength, ' characters'),
    schema.pattern === undefined ? undefined : `matches ${code(schema.pattern)}`,
  ];
  return limits.filter((limit) => limit !== undefined).join(', ');
}

/** What the variable is when unset: zod's default, a path inside the repository written from its root. */
function defaultOf(variable: z.ZodType): string {
  const value: unknown = variable.parse(undefined);
  if (value === undefined) return 'unset';
  // A list setting's default after its transform, such as a list of proxy addresses.
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(code).join(', ');
  if (typeof value === 'string' && value.startsWith(projectRoot + path.sep)) return code(`./${path.relative(projectRoot, value)}`);
  return code(value);
}

/**
 * Text of the code as markdown of docs/: the paths it names become links, the variables it names links to their rows;
 * code spans stay as they are.
 */
function markdownOf(text: string, names: ReadonlySet<string>): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) =>
      index % 2
        ? part
        : part
            .replace(/\bdocs\/([\w-]+\.md)(#[\w-]+)?/g, (_, file: string, anchor = '') => `[${file}](${file}${anchor})`)
            .replace(/\b((?:src|activities|workflows)\/[\w/.-]+\.ts)\b/g, (file: string) => `[${code(file)}](../${file})`)
            .replace(/\b[A-Z][A-Z0-9_]+\b/g, (name) => (names.has(name) ? `[${code(name)}](#${name.toLowerCase()})` : name)),
    )
    .join('');
}

/** docs/configuration.md as src/config-variables.ts states it. */
export function renderConfigurationDoc(): string {
  const schemas = z.toJSONSchema(environmentSchema, { io: 'input', unrepresentable: 'any' }).properties as Record<string, VariableSchema>;
  const variables = Object.entries(environmentSchema.shape);
  const names = new Set(variables.map(([name]) => name));
  const rows = variables.map(([name, variable]) => {
    const schema = schemas[name];
    const cells = [`<a id="${name.toLowerCase()}"></a>${code(name)}`, typeOf(schema), defaultOf(variable), limitsOf(schema), markdownOf(schema.description ?? '', names).replace(/\|/g, '\\|')];
    return `| ${cells.join(' | ')} |`;
  });
  return [
    '# Configuration',
    '',
    '<!-- Generated from src/config-variables.ts by `npm run docs:config`: change the descriptions there, not here. -->',
    '',
    markdownOf(
      [
        'Every setting is an environment variable, read once at start by src/config.ts from the list in',
        'src/config-variables.ts; nothing else in the service reads the environment. An empty value counts as unset.',
        'A value of the wrong type or outside its limits stops the start with a message naming the variable. The',
        'secrets production requires, and how to make them: docs/secrets.md#the-secrets-production-needs. The Compose',
        "file's own variables (database passwords, image tags, published ports, the namespace's retention) are listed",
        'in [`.env.example`](../.env.example).',
      ].join('\n'),
      names,
    ),
    '',
    '| variable | type | default | limits | meaning |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

if (require.main === module) {
  writeFileSync(CONFIGURATION_DOC, renderConfigurationDoc());
  console.log(`Wrote ${path.relative(process.cwd(), CONFIGURATION_DOC)}`);
}
