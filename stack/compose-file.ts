import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../src/config';

/**
 * docker-compose.yml read as Compose reads it, for the checks of test/deploy/ and for `npm run stack`, which takes
 * its services' commands, environments, images and scripts from it so that the two cannot describe different stacks.
 */

export type Env = Record<string, string | undefined>;

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
  deploy?: { replicas?: number };
  ports?: unknown[];
  expose?: string[];
  container_name?: string;
  volumes?: string[];
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
  pull_policy?: string;
  profiles?: string[];
  networks?: Record<string, { ipv4_address?: string }>;
  network_mode?: string;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string; ip_range?: string }> } }>;
}

export const COMPOSE_FILE = path.join(projectRoot, 'docker-compose.yml');

/** Compose's variable substitution: $$, $NAME, ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}... */
export function interpolate(text: string, env: Env): string {
  const reference = /\$(\$|[A-Za-z_]\w*|\{([A-Za-z_]\w*)(?:(:?)([-?])([^}]*))?\})/g;
  return text.replace(reference, (_match, bare, name, colon, op, arg) => {
    if (bare === '$') return '$';
    const variable = name ?? bare;
    const value = env[variable];
    const missing = value === undefined || (colon === ':' && value === '');
    if (op === '?' && missing) throw new Error(`${variable}: ${arg}`);
    if (op === '-' && missing) return arg;
    return value ?? '';
  });
}

function interpolateAll(node: unknown, env: Env): unknown {
  if (typeof node === 'string') return interpolate(node, env);
  if (Array.isArray(node)) return node.map((item) => interpolateAll(item, env));
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, interpolateAll(value, env)]));
  }
  return node;
}

/** The variables docker-compose.yml requires (`${NAME:?…}`): its secrets. */
export function requiredVariables(composeText = readFileSync(COMPOSE_FILE, 'utf8')): string[] {
  const code = composeText.replace(/^\s*#.*$/gm, '');
  return [...new Set([...code.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((match) => match[1]))];
}

/** The file as parsed (anchors and `<<` merges resolved), its `${…}` references filled from `env`. */
export function loadCompose(env: Env, text = readFileSync(COMPOSE_FILE, 'utf8')): ComposeFile {
  return interpolateAll(parse(text, { merge: true }), env) as ComposeFile;
}

/**
 * The version in the tag of a service's pinned image (`temporalio/server:1.31.2` → `1.31.2`, `caddy:2.11.4-alpine` →
 * `2.11.4`, `prom/prometheus:v3.16.0` → `3.16.0`).
 */
export function imageVersion(service: ComposeService): string {
  const tag = /:([^:/]+)$/.exec(service.image ?? '')?.[1];
  const version = tag && /^v?(\d+(\.\d+)*)/.exec(tag)?.[1];
  if (!version) throw new Error(`docker-compose.yml: image ${service.image ?? '(none)'} has no version tag`);
  return version;
}

/** The file of this checkout that a service mounts at `containerPath` (a bind mount `./file:/path[:ro]`). */
export function mountedFile(service: ComposeService, containerPath: string): string {
  for (const volume of service.volumes ?? []) {
    const [source, target] = volume.split(':');
    if (!source.startsWith('./')) continue;
    if (containerPath === target) return path.join(projectRoot, source);
    if (containerPath.startsWith(`${target}/`)) return path.join(projectRoot, source, containerPath.slice(target.length + 1));
  }
  throw new Error(`docker-compose.yml: nothing of this checkout is mounted at ${containerPath}`);
}

/** `postgres -c name=value …`: the server settings of a command line. */
export function postgresSettings(command: string[] = []): Record<string, string> {
  const settings: Record<string, string> = {};
  command.forEach((arg, index) => {
    if (arg !== '-c') return;
    const [name, ...value] = command[index + 1].split('=');
    settings[name] = value.join('=');
  });
  return settings;
}

/** Compose's durations as the stack needs them: `45s`, `1m30s` → milliseconds. */
export function durationMs(text: string | undefined, fallbackMs: number): number {
  if (!text) return fallbackMs;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
  }
  return total;
}

/** The file as written, its `${…}` left in place: for what needs no variables (replicas, images). */
export function composeAsWritten(text = readFileSync(COMPOSE_FILE, 'utf8')): ComposeFile {
  return parse(text, { merge: true }) as ComposeFile;
}
