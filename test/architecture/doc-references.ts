import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/*
 * Where the tree points into its documents, and whether each pointer lands: markdown links in the documents, and a
 * document's path from the root, with or without `#anchor`, in code comments, messages and configuration files. Anchors follow GitHub's
 * rules for heading ids, so a link that resolves here resolves on GitHub too. A section is cited by its anchor,
 * never by its title in quotes: a title cannot be checked by the reader's browser, and it goes stale unnoticed.
 */

/** Folders that are built, installed or generated, never written by hand. */
const NOT_OURS = new Set(['node_modules', 'dist']);

/** Every file of the tree under `root`, relative to it, without what NOT_OURS and hidden folders (but .ci) hold. */
export function treeFiles(root: string): string[] {
  const found: string[] = [];
  const visit = (folder: string) => {
    for (const entry of readdirSync(path.join(root, folder), { withFileTypes: true })) {
      const file = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!NOT_OURS.has(entry.name) && (!entry.name.startsWith('.') || entry.name === '.ci')) visit(file);
      } else if (entry.isFile()) found.push(file);
    }
  };
  visit('');
  return found.sort();
}

/** GitHub's id for a heading (github-slugger): lower case, punctuation and symbols dropped, spaces as hyphens. */
export function githubSlug(heading: string): string {
  // Inline code counts as it is written; outside it, links count by their text, and tags and emphasis not at all.
  const text = heading
    .split(/(`+[^`]*`+)/)
    .map((part, index) => (index % 2 ? part.replace(/`/g, '') : part.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>|\*/g, '')))
    .join('');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A markdown text's lines, those of fenced code blocks left empty (so that the line numbers stay). */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((text) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (!fence || marker.startsWith(fence))) {
      fence = fence ? undefined : marker;
      return '';
    }
    return fence ? '' : text;
  });
}

/** The anchors a markdown document has: its headings' ids (a repeated one numbered as GitHub does) and `<a id>`s. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const text of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  }
  return anchors;
}

export interface Reference {
  /** The file that refers, relative to the root. */
  from: string;
  line: number;
  /** The file referred to, relative to the root. */
  target: string;
  anchor?: string;
  /** A section cited by its title instead of an anchor. */
  title?: string;
}

/** The relative links of a markdown document (`[text](target#anchor)`, images too), outside code. */
export function markdownReferences(from: string, markdown: string): Reference[] {
  const lines = proseLines(markdown).map((text) => text.replace(/(`+)[^`]*?\1/g, ''));
  const references: Reference[] = [];
  lines.forEach((prose, index) => {
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const link = match[1];
      if (!link || /^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
      const [file, anchor] = splitAnchor(decodeURIComponent(link));
      const target = file ? path.posix.normalize(path.posix.join(path.posix.dirname(from), file)) : from;
      references.push({ from, line: index + 1, target, anchor });
    }
  });
  return [...references, ...titleCitations(from, lines.join('\n'))];
}

/** A document named in code or configuration by its path from the root, with or without `#anchor`. */
export function codeReferences(from: string, source: string): Reference[] {
  const references: Reference[] = [];
  source.split('\n').forEach((text, index) => {
    for (const match of text.matchAll(/(?<![\w./#-])((?:[\w-]+\/)*[\w.-]+\.md)(#[\w-]*)?/g)) {
      references.push({ from, line: index + 1, target: match[1], anchor: match[2]?.slice(1) });
    }
  });
  return [...references, ...titleCitations(from, source)];
}

/** A document and then a title in quotes, with or without a comma or parenthesis between: a section by its title. */
function titleCitations(from: string, text: string): Reference[] {
  const citation = /((?:[\w-]+\/)*[\w.-]+\.md|\b(?:README|RELIABILITY|BENCHMARKS))\)?,?\s+\(?["“]([^"”]{1,120})["”]/g;
  return [...text.matchAll(citation)].map((match) => ({
    from,
    line: text.slice(0, match.index).split('\n').length,
    target: match[1],
    title: match[2].replace(/\s*\n\s*(?:\*|\/\/|#)?\s*/g, ' '),
  }));
}

function splitAnchor(link: string): [string, string | undefined] {
  const hash = link.indexOf('#');
  return hash < 0 ? [link, undefined] : [link.slice(0, hash), link.slice(hash + 1)];
}

/** Every reference of the tree under `root` that does not land, as `file:line: why`; `unread` files not looked at. */
export function brokenReferences(root: string, unread: readonly string[] = []): string[] {
  const files = treeFiles(root).filter((file) => !unread.includes(file));
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(path.join(root, file), 'utf8')));
    return anchors.get(file)!;
  };
  const references = files.flatMap((file) => {
    if (statSync(path.join(root, file)).size > 1_000_000) return [];
    const text = readFileSync(path.join(root, file), 'utf8');
    if (text.includes('\u0000')) return [];
    return file.endsWith('.md') ? markdownReferences(file, text) : codeReferences(file, text);
  });
  return references.flatMap(({ from, line, target, anchor, title }) => {
    const where = `${from}:${line}`;
    if (title !== undefined) return [`${where}: cites ${target}, "${title}" by its title: cite the heading's anchor instead (${target}#<anchor>)`];
    if (!existsSync(path.join(root, target))) return [`${where}: ${target} does not exist`];
    if (anchor === undefined || !target.endsWith('.md')) return [];
    if (!anchor) return [`${where}: ${target}# has an empty anchor`];
    return anchorsIn(target).has(anchor) ? [] : [`${where}: ${target} has no heading with the anchor #${anchor}`];
  });
}
