import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { RunningStack } from './stack';

/**
 * `<data dir>/stack.json`, written once the stack is ready and removed when it stops: what scripts and tests that
 * drive the stack from outside need (its processes, ports and files), without any secret (those stay in their files).
 */
export const STACK_DESCRIPTION = 'stack.json';

export interface StackDescription {
  apiUrl: string;
  temporalUiUrl: string;
  jaegerUrl: string;
  prometheusUrl: string;
  alertmanagerUrl: string;
  /** Where Alertmanager sends its notifications: a receiver of the caller's, on this port. */
  alertReceiverUrl: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  tls: { ca: string; cert: string; key: string; serverName: string } | null;
  staffUsername: string;
  /** Who signs in to the Temporal UI at the stack's login provider, and the file with the password. */
  temporalUiLogin: { issuer: string; username: string; passwordFile: string };
  secretsDir: string;
  logDir: string;
  /** API replicas' PORT, delivery replicas' METRICS_PORT, each Temporal service's metrics port. */
  ports: { api: number[]; delivery: number[]; temporalMetrics: Record<string, number> };
  /** Process name → pid (`postgres` is the postmaster). */
  processes: Record<string, number>;
}

export function describeStack(stack: RunningStack): StackDescription {
  const { certificates, topology } = stack;
  return {
    apiUrl: stack.apiUrl,
    temporalUiUrl: stack.temporalUiUrl,
    jaegerUrl: stack.jaegerUrl,
    prometheusUrl: stack.prometheusUrl,
    alertmanagerUrl: stack.alertmanagerUrl,
    alertReceiverUrl: stack.alertReceiverUrl,
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    taskQueue: stack.appEnv.TEMPORAL_TASK_QUEUE,
    tls: certificates
      ? { ca: certificates.ca, cert: certificates.client.cert, key: certificates.client.key, serverName: certificates.serverName }
      : null,
    staffUsername: stack.staff.username,
    temporalUiLogin: {
      issuer: topology.oidcProvider.env.OIDC_ISSUER,
      username: topology.oidcProvider.env.OIDC_STAFF_USERNAME,
      passwordFile: path.join(stack.secretsDir, 'oidc_staff_password.txt'),
    },
    secretsDir: stack.secretsDir,
    logDir: stack.logDir,
    ports: {
      api: topology.api.map((spec) => Number(spec.env.PORT)),
      delivery: topology.delivery.map((spec) => Number(spec.env.METRICS_PORT)),
      temporalMetrics: Object.fromEntries(topology.temporal.map((spec) => [spec.name, Number(spec.env.PROMETHEUS_ENDPOINT.split(':')[1])])),
    },
    processes: Object.fromEntries(stack.processes()),
  };
}

/** Whether a process of that pid exists (signal 0 checks without sending anything). */
export const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A stack.json left in the data folder: the stack there still runs, or its runner was killed before it could stop
 * its processes. Refuses to start over either (their ports and the Postgres cluster are taken), naming the pids;
 * a file whose processes are all gone is removed.
 */
export async function refuseLeftoverStack(dataDir: string): Promise<void> {
  const file = path.join(dataDir, STACK_DESCRIPTION);
  if (!existsSync(file)) return;
  const { processes } = JSON.parse(await readFile(file, 'utf8')) as StackDescription;
  const running = Object.entries(processes).filter(([, pid]) => isRunning(pid));
  if (running.length > 0) {
    throw new Error(
      `a stack of ${dataDir} still runs: ${running.map(([name, pid]) => `${name} (pid ${pid})`).join(', ')}; ` +
        'stop it with Ctrl-C where it was started, or end those processes',
    );
  }
  await rm(file);
}
