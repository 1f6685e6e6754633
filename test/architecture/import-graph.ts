import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseSync } from '@swc/core';

/**
 * Who imports whom among our own modules, read from their syntax trees: static imports and re-exports (types too),
 * `import('…')` and `require('…')`/`require.resolve('…')` of a relative path, and `import('…')` types.
 */

export const ROOT = path.resolve(__dirname, '../..');

export interface Import {
  /** The importing file, relative to the repository root. */
  from: string;
  /** The imported file. */
  to: string;
  /** As written in the source. */
  specifier: string;
}

/** The TypeScript sources under `folder` (relative to the root), sorted. */
export function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.posix.join(folder, file.split(path.sep).join('/')))
    .sort();
}

/** swc's syntax tree, as far as it is read here. */
export interface Node {
  type: string;
  [key: string]: unknown;
}

export const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';

/** Calls `visit` on every node of the tree, depth first. */
export function walk(node: unknown, visit: (node: Node) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  if (isNode(node)) visit(node);
  for (const [key, child] of Object.entries(node)) if (key !== 'span') walk(child, visit);
}

const stringValue = (node: unknown) => (isNode(node) && node.type === 'StringLiteral' ? (node.value as string) : undefined);

/** `require` or `require.resolve`. */
function isRequire(callee: unknown): boolean {
  if (!isNode(callee)) return false;
  if (callee.type === 'Identifier') return callee.value === 'require';
  return callee.type === 'MemberExpression' && isNode(callee.object) && callee.object.type === 'Identifier' && callee.object.value === 'require';
}

/** Every module specifier the source names. */
export function specifiersOf(source: string): string[] {
  const found: string[] = [];
  walk(parseSync(source, { syntax: 'typescript', target: 'es2022' }), (node) => {
    if (['ImportDeclaration', 'ExportAllDeclaration', 'ExportNamedDeclaration'].includes(node.type)) {
      const value = stringValue(node.source);
      if (value !== undefined) found.push(value);
    } else if (node.type === 'CallExpression' && (isNode(node.callee) && node.callee.type === 'Import' || isRequire(node.callee))) {
      const [first] = node.arguments as Array<{ expression: unknown }>;
      const value = first && stringValue(first.expression);
      if (value !== undefined) found.push(value);
    } else if (node.type === 'TsImportType') {
      const value = stringValue(node.argument);
      if (value !== undefined) found.push(value);
    }
  });
  return found;
}

/** The file a relative specifier names (a module or a folder's index); undefined for a package. */
export function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.join(path.posix.dirname(from), specifier);
  return [`${base}.ts`, `${base}/index.ts`, base].find((candidate) => candidate.endsWith('.ts') && existsSync(path.join(ROOT, candidate)));
}

/** Every import between our modules in these folders (the imported module may lie elsewhere). */
export function importsIn(folders: readonly string[]): Import[] {
  return folders.flatMap(sourceFiles).flatMap((from) =>
    specifiersOf(readFileSync(path.join(ROOT, from), 'utf8')).flatMap((specifier) => {
      const to = resolveSpecifier(from, specifier);
      return to === undefined ? [] : [{ from, to, specifier }];
    }),
  );
}

/**
 * The cycles of a directed graph (its strongly connected components of more than one node), each as its nodes;
 * Tarjan's algorithm.
 */
export function cyclesOf(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) connect(node);
  return cycles;
}
