import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
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

export interface JaegerTools {
  /** The Jaeger v2 release, as the jaegertracing/jaeger image is tagged. */
  release: string;
  /** The Go module's version it is built from (the module kept Jaeger's v1 numbering). */
  moduleVersion: string;
  jaeger: string;
}

export interface PrometheusTools {
  /** The Prometheus release, as the prom/prometheus image is tagged (without its `v`). */
  release: string;
  moduleVersion: string;
  prometheus: string;
}

export interface AlertmanagerTools {
  version: string;
  alertmanager: string;
  amtool: string;
  /** The package's templates and UI page, which Debian's build reads from DEBIAN_ALERTMANAGER_ASSETS. */
  assets: string;
}

/** Where Debian's Alertmanager reads its notification templates (a fixed path of its build, no flag moves it). */
export const DEBIAN_ALERTMANAGER_ASSETS = '/usr/share/prometheus/alertmanager';

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

/**
 * Jaeger v2's releases and the versions of the Go module github.com/jaegertracing/jaeger they were tagged with (its
 * CHANGELOG names both: "v1.76.0 / v2.13.0"). A new pin of the jaegertracing/jaeger image needs its line here.
 */
export const JAEGER_MODULE_VERSIONS: Readonly<Record<string, string>> = { '2.13.0': '1.76.0' };

export function jaegerTools(release: string): JaegerTools {
  const moduleVersion = JAEGER_MODULE_VERSIONS[release];
  if (!moduleVersion) throw new Error(`jaegertracing/jaeger:${release}: its Go module version is not in JAEGER_MODULE_VERSIONS (stack/tools.ts)`);
  return { release, moduleVersion, jaeger: path.join(TOOLS_DIR, `jaeger-${moduleVersion}`, 'bin', 'jaeger') };
}

/** Prometheus 3.x.y is the Go module's v0.3xx.y (3.16.0 → v0.316.0): the module cannot carry a major version 3. */
export function prometheusModuleVersion(release: string): string {
  const match = /^3\.(\d+)\.(\d+)$/.exec(release);
  if (!match) throw new Error(`prom/prometheus:v${release}: only 3.x.y releases map to a Go module version`);
  return `0.${300 + Number(match[1])}.${match[2]}`;
}

export function prometheusTools(release: string): PrometheusTools {
  const moduleVersion = prometheusModuleVersion(release);
  return { release, moduleVersion, prometheus: path.join(TOOLS_DIR, `prometheus-${moduleVersion}`, 'bin', 'prometheus') };
}

export function alertmanagerTools(version: string): AlertmanagerTools {
  const dir = path.join(TOOLS_DIR, `alertmanager-${version}`);
  return { version, alertmanager: path.join(dir, 'bin', 'alertmanager'), amtool: path.join(dir, 'bin', 'amtool'), assets: path.join(dir, 'share') };
}

const goBuildEnv = (): NodeJS.ProcessEnv => ({ ...process.env, GOFLAGS: [process.env.GOFLAGS, '-buildvcs=false'].filter(Boolean).join(' ') });

/** `go install <package>@<version>` into `bin`, its output passed on so that a long build shows it is alive. */
async function goInstall(modulePackage: string, version: string, bin: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  await run('go', ['install', `${modulePackage}@v${version}`], { env: { ...goBuildEnv(), GOBIN: bin } }, `go install ${modulePackage}@v${version} (needs Go on PATH: https://go.dev/dl/)`);
  log(`  ${modulePackage}@v${version}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** Runs a build command with its output passed on; fails naming `what`. */
async function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv }, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', (err) => reject(new Error(`${what}: ${err.message}`)));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${what} failed (exit ${code})`))));
  });
}

const goEnv = async (name: string) => (await promisify(execFile)('go', ['env', name])).stdout.trim();

/**
 * `go build` of a package of a module as the main module, from its source in Go's module cache: for a module whose
 * go.mod has replace directives, which `go install <package>@<version>` refuses.
 */
async function goBuildAsMainModule(modulePath: string, version: string, packageDir: string, output: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const download = await promisify(execFile)('go', ['mod', 'download', '-json', `${modulePath}@v${version}`], { cwd: os.tmpdir(), env: goBuildEnv() });
  const { Dir: source } = JSON.parse(download.stdout) as { Dir: string };
  await run('go', ['build', '-o', output, packageDir], { cwd: source, env: goBuildEnv() }, `go build ${modulePath}/${packageDir}@v${version}`);
  log(`  ${modulePath}@v${version}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

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
    // Read before it: the listen address on loopback, the file Compose mounts there (deploy/temporal-ui/base.yaml).
    await copyFile(path.join(projectRoot, 'deploy', 'temporal-ui', 'base.yaml'), path.join(dir, 'config', 'base.yaml'));
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

export async function ensureJaeger(release: string, log: (line: string) => void): Promise<JaegerTools> {
  const tools = jaegerTools(release);
  if (existsSync(tools.jaeger)) return tools;
  log(`Building Jaeger ${release} from its Go module v${tools.moduleVersion} (once per version; 42 min at low priority on two busy cores). Its UI's assets are not in the module: the query API serves, the UI shows a placeholder`);
  await buildInto(path.dirname(path.dirname(tools.jaeger)), (dir) =>
    goBuildAsMainModule('github.com/jaegertracing/jaeger', tools.moduleVersion, './cmd/jaeger', path.join(dir, 'bin', 'jaeger'), log),
  );
  return tools;
}

export async function ensurePrometheus(release: string, log: (line: string) => void): Promise<PrometheusTools> {
  const tools = prometheusTools(release);
  if (existsSync(tools.prometheus)) return tools;
  log(`Building Prometheus ${release} from its Go module v${tools.moduleVersion} (once per version; 49 min at low priority on two busy cores). Its web UI's assets are not in the module: the API serves, the UI does not`);
  await buildInto(path.dirname(path.dirname(tools.prometheus)), (dir) =>
    goInstall('github.com/prometheus/prometheus/cmd/prometheus', tools.moduleVersion, path.join(dir, 'bin'), log),
  );
  return tools;
}

/**
 * Alertmanager from Debian's package `prometheus-alertmanager`, unpacked, not installed (its Go module does not build
 * with `go install`: the web UI's assets are not in it). Needs apt-get and root once; refuses a Debian version other
 * than the pinned one, so that the stack never runs another Alertmanager than Compose's. Debian's build reads its
 * templates from a fixed path: where nothing is there, a symbolic link to the unpacked ones (root, once per machine).
 */
export async function ensureAlertmanager(version: string, log: (line: string) => void): Promise<AlertmanagerTools> {
  const tools = await unpackAlertmanager(version, log);
  if (!existsSync(DEBIAN_ALERTMANAGER_ASSETS)) {
    log(`Linking ${DEBIAN_ALERTMANAGER_ASSETS}, where Debian's Alertmanager reads its templates, to ${path.relative(projectRoot, tools.assets)}`);
    await mkdir(path.dirname(DEBIAN_ALERTMANAGER_ASSETS), { recursive: true });
    // A link left dangling (its checkout removed) is replaced; to the real path, not through a symlinked .tools.
    await rm(DEBIAN_ALERTMANAGER_ASSETS, { force: true });
    await symlink(await realpath(tools.assets), DEBIAN_ALERTMANAGER_ASSETS);
  }
  return tools;
}

async function unpackAlertmanager(version: string, log: (line: string) => void): Promise<AlertmanagerTools> {
  const tools = alertmanagerTools(version);
  if (existsSync(tools.alertmanager) && existsSync(tools.assets)) return tools;
  log(`Unpacking Alertmanager ${version} from Debian's package prometheus-alertmanager (once per version)`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'alertmanager-deb-'));
  try {
    // apt downloads as the user _apt where it can.
    await chmod(work, 0o755);
    await run('apt-get', ['update', '-qq'], {}, 'apt-get update (Alertmanager comes from Debian: run as root on Debian)');
    await run('apt-get', ['download', '-qq', 'prometheus-alertmanager'], { cwd: work }, 'apt-get download prometheus-alertmanager');
    const [deb] = (await readdir(work)).filter((file) => file.endsWith('.deb'));
    const packaged = (await promisify(execFile)('dpkg-deb', ['-f', path.join(work, deb), 'Version'])).stdout.trim();
    if (!packaged.startsWith(`${version}-`)) {
      throw new Error(`Debian's prometheus-alertmanager is ${packaged}, docker-compose.yml pins prom/alertmanager:v${version}: pin the image to Debian's version`);
    }
    await run('dpkg-deb', ['-x', path.join(work, deb), path.join(work, 'root')], {}, 'dpkg-deb -x');
    // An unpacking of an earlier version of this function, without the assets.
    await rm(path.dirname(tools.assets), { recursive: true, force: true });
    await buildInto(path.dirname(tools.assets), async (dir) => {
      await rename(path.join(work, 'root', 'usr', 'bin', 'prometheus-alertmanager'), path.join(dir, 'bin', 'alertmanager'));
      await rename(path.join(work, 'root', 'usr', 'bin', 'amtool'), path.join(dir, 'bin', 'amtool'));
      await rename(path.join(work, 'root', DEBIAN_ALERTMANAGER_ASSETS), path.join(dir, 'share'));
      await writeFile(path.join(dir, 'PACKAGE'), `prometheus-alertmanager ${packaged} (Debian)\n`);
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
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
    jaegerTools(imageVersion(services.jaeger)).jaeger,
    prometheusTools(imageVersion(services.prometheus)).prometheus,
    alertmanagerTools(imageVersion(services.alertmanager)).alertmanager,
  ];
}

// `node dist/stack/tools.js --built`: exit 0 when they are, for .ci/run, which cannot afford the first build.
if (require.main === module && process.argv[2] === '--built') {
  const missing = builtTools().filter((file) => !existsSync(file));
  for (const file of missing) process.stdout.write(`not built: ${path.relative(projectRoot, file)}\n`);
  process.exit(missing.length === 0 ? 0 : 1);
}
