import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../src/config';
import { composeAsWritten, imageVersion } from './compose-file';

/**
 * The Go programs of the stack, built from their Go modules at the versions docker-compose.yml pins and kept under
 * .tools/, one folder per version: built once (the Temporal server alone takes 8 min of CPU, 18–40 min on two busy cores), rebuilt
 * only when the pin changes. A folder exists only once its build is complete (it is built beside and renamed).
 */

export const TOOLS_DIR = path.join(projectRoot, '.tools');

export interface TemporalServerTools {
  version: string;
  /** `temporal-server`, as the temporalio/server image names it. */
  server: string;
  /** `temporal-sql-tool`, as the temporalio/admin-tools image names it. */
  sqlTool: string;
  bin: string;
  /** The module's `schema` folder, where the admin-tools image has /etc/temporal/schema. */
  schemaDir: string;
}

export interface CaddyTools {
  version: string;
  caddy: string;
}

export interface TemporalUiTools {
  version: string;
  /** `ui-server`, as the temporalio/ui image names it. */
  server: string;
  /** `--root`: its `config/` holds the image's `docker.yaml` and a `base.yaml` read before it. */
  root: string;
}

export const temporalServerTools = (version: string): TemporalServerTools => {
  const dir = path.join(TOOLS_DIR, `temporal-server-${version}`);
  return {
    version,
    server: path.join(dir, 'bin', 'temporal-server'),
    sqlTool: path.join(dir, 'bin', 'temporal-sql-tool'),
    bin: path.join(dir, 'bin'),
    schemaDir: path.join(dir, 'schema'),
  };
};

export const temporalUiTools = (version: string): TemporalUiTools => {
  const root = path.join(TOOLS_DIR, `temporal-ui-${version}`);
  return { version, server: path.join(root, 'bin', 'ui-server'), root };
};

export const caddyTools = (version: string): CaddyTools => ({
  version,
  caddy: path.join(TOOLS_DIR, `caddy-${version}`, 'bin', 'caddy'),
});

/** `go install <package>@<version>` into `bin`, its output passed on so that a long build shows it is alive. */
async function goInstall(modulePackage: string, version: string, bin: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('go', ['install', `${modulePackage}@v${version}`], {
      env: { ...process.env, GOBIN: bin, GOFLAGS: [process.env.GOFLAGS, '-buildvcs=false'].filter(Boolean).join(' ') },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', (err) => reject(new Error(`go install needs Go (https://go.dev/dl/) on PATH: ${err.message}`)));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`go install ${modulePackage}@v${version} failed (exit ${code})`))));
  });
  log(`  ${modulePackage}@v${version}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

const goEnv = async (name: string) => (await promisify(execFile)('go', ['env', name])).stdout.trim();

/** A folder of a module in Go's module cache, copied and made writable (the cache is read-only). */
async function copyFromModule(modulePath: string, version: string, folder: string, target: string): Promise<void> {
  await cp(path.join(await goEnv('GOMODCACHE'), `${modulePath}@v${version}`, folder), target, { recursive: true });
  await promisify(execFile)('chmod', ['-R', 'u+w', target]);
}

/** Builds into `<final>.partial`, then renames: an interrupted build leaves no folder that looks complete. */
async function buildInto(finalDir: string, build: (dir: string) => Promise<void>): Promise<void> {
  const partial = `${finalDir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(path.join(partial, 'bin'), { recursive: true });
  await build(partial);
  await rename(partial, finalDir);
}

export async function ensureTemporalServer(version: string, log: (line: string) => void): Promise<TemporalServerTools> {
  const tools = temporalServerTools(version);
  if (existsSync(tools.server) && existsSync(tools.sqlTool)) return tools;
  const finalDir = path.dirname(tools.bin);
  log(`Building the Temporal server ${version} from its Go module into ${path.relative(projectRoot, finalDir)}/ (once per version; 8 min of CPU, up to 40 min on a busy machine)`);
  const started = Date.now();
  await buildInto(finalDir, async (dir) => {
    const bin = path.join(dir, 'bin');
    await goInstall('go.temporal.io/server/cmd/server', version, bin, log);
    await goInstall('go.temporal.io/server/cmd/tools/sql', version, bin, log);
    await rename(path.join(bin, 'server'), path.join(bin, 'temporal-server'));
    await rename(path.join(bin, 'sql'), path.join(bin, 'temporal-sql-tool'));
    // The SQL schemas ship in the module (the admin-tools image copies the same folder).
    await copyFromModule('go.temporal.io/server', version, 'schema', path.join(dir, 'schema'));
    await writeFile(path.join(dir, 'BUILT'), `${new Date().toISOString()} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  });
  log(`Built in ${((Date.now() - started) / 60_000).toFixed(1)} min`);
  return tools;
}

export async function ensureTemporalUi(version: string, log: (line: string) => void): Promise<TemporalUiTools> {
  const tools = temporalUiTools(version);
  if (existsSync(tools.server)) return tools;
  log(`Building the Temporal UI server ${version} from its Go module, which carries the built Web UI (once per version; 1.5 min of CPU)`);
  await buildInto(tools.root, async (dir) => {
    const bin = path.join(dir, 'bin');
    await goInstall('github.com/temporalio/ui-server/v2/cmd/server', version, bin, log);
    await rename(path.join(bin, 'server'), path.join(bin, 'ui-server'));
    // The image's configuration template (its only config file), rendered by the server from the variables.
    await mkdir(path.join(dir, 'config'));
    await copyFromModule('github.com/temporalio/ui-server/v2', version, 'config/docker.yaml', path.join(dir, 'config', 'docker.yaml'));
    // Read before it: the template leaves the listen address empty (all interfaces, fine in a container); on a
    // shared host the UI, which has no login, listens on loopback, as Compose publishes it.
    await writeFile(path.join(dir, 'config', 'base.yaml'), 'host: 127.0.0.1\n');
  });
  return tools;
}

export async function ensureCaddy(version: string, log: (line: string) => void): Promise<CaddyTools> {
  const tools = caddyTools(version);
  if (existsSync(tools.caddy)) return tools;
  log(`Building Caddy ${version} from its Go module (once per version; 2.5 min of CPU)`);
  await buildInto(path.dirname(path.dirname(tools.caddy)), (dir) =>
    goInstall('github.com/caddyserver/caddy/v2/cmd/caddy', version, path.join(dir, 'bin'), log),
  );
  return tools;
}

/** The programs the stack runs at the versions docker-compose.yml pins, whether built or not. */
export function builtTools(): string[] {
  const { services } = composeAsWritten();
  const temporal = temporalServerTools(imageVersion(services.temporal));
  return [
    temporal.server,
    temporal.sqlTool,
    temporalUiTools(imageVersion(services['temporal-ui'])).server,
    caddyTools(imageVersion(services.proxy)).caddy,
  ];
}

// `node dist/stack/tools.js --built`: exit 0 when they are, for .ci/run, which cannot afford the first build.
if (require.main === module && process.argv[2] === '--built') {
  const missing = builtTools().filter((file) => !existsSync(file));
  for (const file of missing) process.stdout.write(`not built: ${path.relative(projectRoot, file)}\n`);
  process.exit(missing.length === 0 ? 0 : 1);
}
