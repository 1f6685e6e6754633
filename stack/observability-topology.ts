import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { type ComposeFile, type ComposeService, mountedFile } from './compose-file';
import type { PortPlan } from './ports';
import type { AlertmanagerTools, JaegerTools, PrometheusTools } from './tools';
import type { ProcessSpec } from './process-spec';

/**
 * The operators' plane of docker-compose.yml (jaeger, prometheus, alertmanager) as local processes: the same
 * programs, command lines and configuration files, with loopback ports and this checkout's paths instead of the
 * containers' (LOCAL_CHANGES in stack/topology.ts says which). Pure: test/deploy/stack.test.ts checks it.
 */

/** A file the stack writes before the process starts: a configuration made local, or a secret (mode 0600). */
export interface WrittenFile {
  path: string;
  content: string;
}

/** `copies`: a built tool's files that must lie beside the written ones (`path`, copied from `from`). */
export type ConfiguredProcess = ProcessSpec & { files: WrittenFile[]; copies?: Array<{ path: string; from: string }> };

export interface ObservabilityTopology {
  jaeger: ProcessSpec;
  prometheus: ConfiguredProcess;
  alertmanager: ConfiguredProcess;
}

export interface ObservabilityContext {
  compose: ComposeFile;
  ports: PortPlan;
  jaeger: JaegerTools;
  prometheus: PrometheusTools;
  alertmanager: AlertmanagerTools;
  /** Where the stack keeps its state: the local configurations, Prometheus' and Alertmanager's storage. */
  stateDir: string;
  /** `/metrics` scrape targets by Compose job name, as `127.0.0.1:<port>`. */
  scrapeTargets: Record<string, string[]>;
}

function service(compose: ComposeFile, name: string): ComposeService {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}; stack/observability-topology.ts must follow it`);
  return found;
}

/**
 * A Compose command line with each `--flag=<container path>` of `paths` given its local path; every flag of
 * `required` must be there, so that a change of the Compose command fails here rather than run with container paths.
 */
export function localArgs(args: string[], paths: Record<string, string>, required: string[]): string[] {
  const flagsSeen = new Set<string>();
  const local = args.map((arg) => {
    const [flag, value] = arg.split(/=(.*)/s, 2);
    flagsSeen.add(flag);
    return value !== undefined && value in paths ? `${flag}=${paths[value]}` : arg;
  });
  const missing = required.filter((flag) => !flagsSeen.has(flag));
  if (missing.length > 0) throw new Error(`docker-compose.yml: the command no longer has ${missing.join(', ')}; stack/observability-topology.ts must follow it`);
  return local;
}

interface PrometheusConfig {
  rule_files?: string[];
  alerting?: { alertmanagers?: Array<{ static_configs?: Array<{ targets: string[] }> }> };
  scrape_configs?: Array<{
    job_name: string;
    authorization?: { credentials_file?: string };
    static_configs?: Array<{ targets: string[] }>;
    dns_sd_configs?: unknown[];
  }>;
}

/**
 * Compose's prometheus.yml for one host: each job's targets (Compose's DNS names or service addresses) replaced by
 * the local ones, the token file and the rule folder by local paths, Alertmanager's address by its loopback port.
 * Every other setting (intervals, rules, relabelling) stays. A job without local targets fails loudly.
 */
export function localPrometheusConfig(
  composeConfig: string,
  { targets, alertmanager, ruleFolder, tokenFile }: { targets: Record<string, string[]>; alertmanager: string; ruleFolder: (containerFolder: string) => string; tokenFile: string },
): string {
  const config = parse(composeConfig) as PrometheusConfig;
  config.rule_files = (config.rule_files ?? []).map((pattern) => path.join(ruleFolder(path.posix.dirname(pattern)), path.posix.basename(pattern)));
  for (const manager of config.alerting?.alertmanagers ?? []) manager.static_configs = [{ targets: [alertmanager] }];
  for (const job of config.scrape_configs ?? []) {
    const local = targets[job.job_name];
    if (!local) throw new Error(`deploy/prometheus/prometheus.yml: job ${job.job_name} has no local targets; stack/topology.ts must follow it`);
    delete job.dns_sd_configs;
    job.static_configs = [{ targets: local }];
    if (job.authorization?.credentials_file) job.authorization.credentials_file = tokenFile;
  }
  return stringify(config);
}

interface AlertmanagerConfig {
  receivers?: Array<{ webhook_configs?: Array<{ url: string }> }>;
}

/** Compose's alertmanager.yml with every webhook sent to the stack's alert receiver on loopback (its path kept). */
export function localAlertmanagerConfig(composeConfig: string, receiverPort: number): string {
  const config = parse(composeConfig) as AlertmanagerConfig;
  for (const webhook of (config.receivers ?? []).flatMap((receiver) => receiver.webhook_configs ?? [])) {
    const url = new URL(webhook.url);
    webhook.url = `http://127.0.0.1:${receiverPort}${url.pathname}${url.search}`;
  }
  return stringify(config);
}

export function observabilityTopology(context: ObservabilityContext): ObservabilityTopology {
  const { compose, ports, stateDir } = context;
  const jaegerService = service(compose, 'jaeger');
  const [configFlag, configFile] = jaegerService.command ?? [];
  if (configFlag !== '--config' || !configFile) throw new Error('docker-compose.yml: jaeger no longer runs --config <file>');

  const prometheusService = service(compose, 'prometheus');
  const prometheusConfigPath = path.join(stateDir, 'prometheus.yml');
  const tokenFile = path.join(stateDir, 'prometheus-metrics-token');
  const prometheusConfig = localPrometheusConfig(readFileSync(mountedFile(prometheusService, '/etc/prometheus/prometheus.yml'), 'utf8'), {
    targets: { ...context.scrapeTargets, prometheus: [`127.0.0.1:${ports.prometheus}`], alertmanager: [`127.0.0.1:${ports.alertmanager}`], jaeger: [`127.0.0.1:${ports.jaeger.metrics}`] },
    alertmanager: `127.0.0.1:${ports.alertmanager}`,
    ruleFolder: (folder) => mountedFile(prometheusService, folder),
    tokenFile,
  });

  const alertmanagerService = service(compose, 'alertmanager');
  const alertmanagerConfigPath = path.join(stateDir, 'alertmanager.yml');

  return {
    jaeger: {
      name: 'jaeger',
      service: 'jaeger',
      command: context.jaeger.jaeger,
      args: [configFlag, mountedFile(jaegerService, configFile)],
      // The configuration's listen addresses are these variables, Compose's defaults when unset.
      env: {
        ...(jaegerService.environment ?? {}),
        JAEGER_OTLP_GRPC_ENDPOINT: `127.0.0.1:${ports.jaeger.otlpGrpc}`,
        JAEGER_OTLP_HTTP_ENDPOINT: `127.0.0.1:${ports.jaeger.otlpHttp}`,
        JAEGER_QUERY_HTTP_ENDPOINT: `127.0.0.1:${ports.jaeger.query}`,
        JAEGER_QUERY_GRPC_ENDPOINT: `127.0.0.1:${ports.jaeger.queryGrpc}`,
        JAEGER_METRICS_HOST: '127.0.0.1',
        JAEGER_METRICS_PORT: String(ports.jaeger.metrics),
      },
      stopGraceMs: 10_000,
      ready: { url: `http://127.0.0.1:${ports.jaeger.query}/api/services` },
    },
    prometheus: {
      name: 'prometheus',
      service: 'prometheus',
      command: context.prometheus.prometheus,
      // Compose's command (its entrypoint, start.sh, only writes the token file: the stack writes it below).
      args: [
        ...localArgs(
          prometheusService.command ?? [],
          { '/etc/prometheus/prometheus.yml': prometheusConfigPath, '/prometheus': path.join(stateDir, 'prometheus') },
          ['--config.file', '--storage.tsdb.path'],
        ),
        `--web.listen-address=127.0.0.1:${ports.prometheus}`,
      ],
      env: Object.fromEntries(Object.entries(prometheusService.environment ?? {}).filter(([name]) => name !== 'METRICS_TOKEN')),
      stopGraceMs: 10_000,
      ready: { url: `http://127.0.0.1:${ports.prometheus}/-/ready` },
      files: [
        { path: prometheusConfigPath, content: prometheusConfig },
        { path: tokenFile, content: prometheusService.environment?.METRICS_TOKEN ?? '' },
      ],
    },
    alertmanager: {
      name: 'alertmanager',
      service: 'alertmanager',
      command: context.alertmanager.alertmanager,
      args: [
        ...localArgs(
          alertmanagerService.command ?? [],
          { '/etc/alertmanager/alertmanager.yml': alertmanagerConfigPath, '/alertmanager': path.join(stateDir, 'alertmanager') },
          ['--config.file', '--storage.path'],
        ),
        `--web.listen-address=127.0.0.1:${ports.alertmanager}`,
      ],
      env: alertmanagerService.environment ?? {},
      stopGraceMs: 10_000,
      ready: { url: `http://127.0.0.1:${ports.alertmanager}/-/ready` },
      files: [
        {
          path: alertmanagerConfigPath,
          content: localAlertmanagerConfig(readFileSync(mountedFile(alertmanagerService, '/etc/alertmanager/alertmanager.yml'), 'utf8'), ports.alertReceiver),
        },
      ],
    },
  };
}
