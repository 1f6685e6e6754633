import { parseSync } from '@swc/core';
import { isNode, type Node, walk } from './import-graph';

/**
 * Where a TypeScript source names one of the given tables (or sequences) in SQL, found in its syntax tree (so
 * comments and prose never count):
 *
 * - `table`: the table argument of a Knex call (`db('t')`, `trx('t as x')`, `context.db('t')`, `knex('t')`,
 *   `.from('t')`, `.into('t')`, `.table('t')`, the alias form `db({ x: 't' })`), also through a string constant of
 *   the file (`const TABLE = 't'; db(TABLE)`, `` db(`${TABLE} as x`) ``), and a `tableName` property (Objection
 *   models, rate-limiter-flexible). A Knex instance is recognised by the names it goes by here (`db`, `trx`, …).
 * - `join`: the table argument of a Knex join method (`.join('t …')`, `.leftJoin`, …) or a raw `JOIN t`;
 * - `raw`: the name where SQL text puts a table (`FROM t`, `INTO t`, `UPDATE "t"`, `FROM a, t`, `public.t`),
 *   qualifying a column (`t.column`) or quoted (`nextval('t_seq')`), in a string that reads as SQL, in any case.
 */
export type ReferenceKind = 'table' | 'join' | 'raw';

export interface SqlReference {
  name: string;
  kind: ReferenceKind;
  /** The string it was found in, as written in the source. */
  text: string;
}

/** Knex methods that take a table, and the names a Knex instance or transaction goes by when called. */
const TABLE_METHODS = new Set(['from', 'into', 'table', 'db', 'trx', 'tx', 'knex', 'database', 'transaction', 'connection']);
const JOIN_METHODS = new Set([
  'join',
  'innerJoin',
  'leftJoin',
  'leftOuterJoin',
  'rightJoin',
  'rightOuterJoin',
  'fullOuterJoin',
  'outerJoin',
  'crossJoin',
]);
const SQL_WORDS = /\b(select|insert|update|delete|from|join|into|returning|where|values|nextval|setval|currval|truncate|alter|lock|copy)\b/i;
const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_$]*/g;
/** Where SQL names a table: after FROM, JOIN, INTO, UPDATE, TABLE, …, or in a FROM list, perhaps quoted or `public.`. */
const TABLE_POSITION = /\b(from|join|into|update|table|truncate|copy|using|only|lateral|,)\s*(?:"?public"?\s*\.\s*)?"?$/i;
/** `t.column`: a column qualified by its table. */
const QUALIFIER = /^"?\s*\./;
/** `t`, `t as x`, `t x`, `"t"`, `public.t`: what Knex takes as a table. */
const KNEX_TABLE = /^\s*(?:"?public"?\s*\.\s*)?"?([A-Za-z_][A-Za-z0-9_$]*)"?(?:\s+(?:as\s+)?"?[A-Za-z_][A-Za-z0-9_$]*"?)?\s*$/i;


/** Wrappers that do not change the value: `x as T`, `x!`, `(x)`, `x satisfies T`. */
function unwrap(node: Node): Node {
  let current = node;
  while (
    ['TsAsExpression', 'TsNonNullExpression', 'ParenthesisExpression', 'TsSatisfiesExpression', 'TsConstAssertion'].includes(
      current.type,
    )
  ) {
    current = current.expression as Node;
  }
  return current;
}

/** The strings an expression can be, as far as literals and the file's string constants tell. */
function stringsOf(node: Node | undefined, constants: Map<string, string>): Array<{ value: string; text: string }> {
  if (!node) return [];
  const expression = unwrap(node);
  switch (expression.type) {
    case 'StringLiteral':
      return [{ value: expression.value as string, text: expression.raw as string }];
    case 'TemplateLiteral': {
      const value = templateValue(expression, constants);
      return [{ value, text: `\`${value}\`` }];
    }
    case 'Identifier': {
      const value = constants.get(expression.value as string);
      return value === undefined ? [] : [{ value, text: `${expression.value as string} = '${value}'` }];
    }
    case 'ObjectExpression':
      return (expression.properties as Node[]).flatMap((property) =>
        property.type === 'KeyValueProperty' ? stringsOf(property.value as Node, constants) : [],
      );
    case 'ArrayExpression':
      return (expression.elements as Array<{ expression: Node } | null>).flatMap((element) =>
        element ? stringsOf(element.expression, constants) : [],
      );
    case 'ConditionalExpression':
      return [...stringsOf(expression.consequent as Node, constants), ...stringsOf(expression.alternate as Node, constants)];
    case 'BinaryExpression': {
      if (expression.operator !== '+') return [];
      const [left] = stringsOf(expression.left as Node, constants);
      const [right] = stringsOf(expression.right as Node, constants);
      return left && right ? [{ value: left.value + right.value, text: `${left.text} + ${right.text}` }] : [];
    }
    default:
      return [];
  }
}

/** A template's text, each `${constant}` replaced by its value and any other expression by a blank. */
function templateValue(template: Node, constants: Map<string, string>): string {
  const quasis = template.quasis as Array<{ cooked: string | null; raw: string }>;
  // A template literal type (`donor_${F}`) has `types` instead of `expressions`: none of them is a known string.
  const expressions = (template.expressions ?? template.types) as Node[];
  return quasis
    .map((quasi, index) => {
      const expression = expressions[index];
      const [substituted] = expression ? stringsOf(expression as Node, constants) : [];
      return (quasi.cooked ?? quasi.raw) + (expression ? (substituted?.value ?? ' ') : '');
    })
    .join('');
}

/** The name of what is called: `db` for `db(…)`, `join` for `q.join(…)`, `db` for `context.db(…)`. */
function calleeName(callee: Node): string | undefined {
  const target = unwrap(callee);
  if (target.type === 'Identifier') return target.value as string;
  if (target.type === 'MemberExpression' && isNode(target.property) && target.property.type === 'Identifier') {
    return target.property.value as string;
  }
  return undefined;
}

/** The string constants a module declares (`const T = 't'`, exported or not), by name. */
export function stringConstants(source: string): Map<string, string> {
  const constants = new Map<string, string>();
  walk(parseSync(source, { syntax: 'typescript', target: 'es2022' }), (node) => {
    if (node.type === 'VariableDeclarator' && isNode(node.id) && node.id.type === 'Identifier' && isNode(node.init)) {
      const init = unwrap(node.init);
      if (init.type === 'StringLiteral') constants.set(node.id.value as string, init.value as string);
    }
  });
  return constants;
}

/** The relative modules a source imports names from, with each imported name and the name it goes by here. */
export function namedImports(source: string): Array<{ from: string; imported: string; local: string }> {
  const module = parseSync(source, { syntax: 'typescript', target: 'es2022' });
  return (module.body as unknown as Node[]).flatMap((item) => {
    if (item.type !== 'ImportDeclaration') return [];
    const from = (item.source as Node).value as string;
    return (item.specifiers as Node[])
      .filter((specifier) => specifier.type === 'ImportSpecifier')
      .map((specifier) => {
        const local = (specifier.local as Node).value as string;
        const imported = isNode(specifier.imported) ? (specifier.imported.value as string) : local;
        return { from, imported, local };
      });
  });
}

/**
 * Every table or sequence of `names` that the source names in SQL; `imported` are the string constants it imports
 * (a table's name declared in one module of a folder and queried in another), by the name they go by in the source.
 */
export function sqlReferences(source: string, names: ReadonlySet<string>, imported: ReadonlyMap<string, string> = new Map()): SqlReference[] {
  const module = parseSync(source, { syntax: 'typescript', target: 'es2022' });
  const constants = new Map([...imported, ...stringConstants(source)]);

  const found: SqlReference[] = [];
  const asKnexTable = (strings: Array<{ value: string; text: string }>, kind: ReferenceKind) => {
    for (const { value, text } of strings) {
      const name = KNEX_TABLE.exec(value)?.[1]?.toLowerCase();
      if (name && names.has(name)) found.push({ name, kind, text });
    }
  };
  const inSqlText = ({ value, text }: { value: string; text: string }) => {
    if (!SQL_WORDS.test(value)) return;
    for (const match of value.matchAll(IDENTIFIER)) {
      const name = match[0].toLowerCase();
      if (!names.has(name)) continue;
      const before = value.slice(0, match.index);
      const after = value.slice(match.index + match[0].length);
      const quoted = /["']$/.test(before) && after.startsWith(before.at(-1) as string);
      const table = TABLE_POSITION.exec(before);
      if (table) found.push({ name, kind: /join/i.test(table[1]) ? 'join' : 'raw', text });
      else if (quoted || QUALIFIER.test(after)) found.push({ name, kind: 'raw', text });
    }
  };

  walk(module, (node) => {
    if (node.type === 'CallExpression') {
      const callee = calleeName(node.callee as Node);
      const [first] = node.arguments as Array<{ expression: Node }>;
      if (callee && first) {
        if (JOIN_METHODS.has(callee)) asKnexTable(stringsOf(first.expression, constants), 'join');
        else if (TABLE_METHODS.has(callee)) asKnexTable(stringsOf(first.expression, constants), 'table');
      }
    }
    if ((node.type === 'KeyValueProperty' || node.type === 'ClassProperty') && isNode(node.key)) {
      const key = node.key.type === 'Identifier' ? node.key.value : node.key.type === 'StringLiteral' ? node.key.value : undefined;
      if (key === 'tableName') asKnexTable(stringsOf(node.value as Node, constants), 'table');
    }
    if (node.type === 'StringLiteral') inSqlText({ value: node.value as string, text: node.raw as string });
    if (node.type === 'TemplateLiteral') {
      const value = templateValue(node, constants);
      inSqlText({ value, text: `\`${value}\`` });
    }
  });
  return found;
}
