import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { flags, runMain } from './cli';
import { projectRoot } from '../src/config';
import { composeAsWritten } from './compose-file';
import { planPorts } from './ports';
import { describeStack, refuseLeftoverStack, STACK_DESCRIPTION } from './description';
import { type RunningStack, startStack } from './stack';

/** The stack itself, started by stack/main.ts, which passes on its arguments and sends `stop` for Ctrl-C. */

const asWritten = composeAsWritten().services;
const options = flags({
  api: asWritten.api.deploy?.replicas ?? 2,
  delivery: asWritten.delivery.deploy?.replicas ?? 2,
  history: 1,
  'no-tls': false,
  'base-port': 7300,
  'membership-base-port': 0,
  'data-dir': path.join(projectRoot, '.stack'),
});

const relative = (file: string) => path.relative(process.cwd(), file) || '.';

function banner(stack: RunningStack, seconds: number): string {
  const { topology, certificates } = stack;
  const tls = certificates
    ? ` --tls-ca-path ${relative(certificates.ca)} --tls-cert-path ${relative(certificates.client.cert)} ` +
      `--tls-key-path ${relative(certificates.client.key)} --tls-server-name ${certificates.serverName}`
    : '';
  const metrics = (spec: { name: string; env: Record<string, string> }, port: string | undefined) => `${spec.name} :${port}`;
  const lines = [
    `Stack ready in ${seconds.toFixed(1)} s: Temporal ${stack.temporalVersion} on Postgres, ${certificates ? 'mTLS on the frontend' : 'plain gRPC (--no-tls)'}.`,
    `  API (Caddy → ${topology.api.length} replicas)  ${stack.apiUrl}/   (/healthz, /api/swagger/, /admin/)`,
    `  Staff user                  ${stack.staff.username} / ${stack.staff.password}`,
    `  Temporal UI                 ${stack.temporalUiUrl}/   (read-only; sign in at its login provider ${topology.oidcProvider.env.OIDC_ISSUER})`,
    `  Temporal UI operator        ${topology.oidcProvider.env.OIDC_STAFF_USERNAME} / ${topology.oidcProvider.env.OIDC_STAFF_PASSWORD}`,
    `  Temporal frontend           ${stack.temporalAddress}  namespace ${stack.namespace}${certificates ? `, CA ${relative(certificates.ca)}` : ''}`,
    `  Temporal CLI                .tools/venv/bin/temporal workflow list --address ${stack.temporalAddress}${tls}`,
    `  Postgres                    ${stack.postgresUrl().replace(/:[^:@/]+@/, ':…@')}  (password: ${relative(path.join(options['data-dir'], 'postgres-password.txt'))})`,
    `                              databases donations, temporal, temporal_visibility`,
    `  Metrics (Bearer METRICS_TOKEN, generated into ${relative(path.join(stack.secretsDir, 'metrics_token.txt'))})`,
    `                              ${topology.delivery.map((spec) => metrics(spec, spec.env.METRICS_PORT)).join(', ')}; API replicas on their PORT`,
    `  Temporal metrics            ${topology.temporal.map((spec) => metrics(spec, spec.env.PROMETHEUS_ENDPOINT.split(':')[1])).join(', ')}`,
    `  Jaeger (traces)             ${stack.jaegerUrl}/api/traces?service=donation-webhooks-api   (OTLP: ${topology.api[0].env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'off'})`,
    `  Prometheus (API, no UI)     ${stack.prometheusUrl}/api/v1/targets, /api/v1/alerts`,
    `  Alertmanager                ${stack.alertmanagerUrl}/   notifications go to a webhook on ${stack.alertReceiverUrl}/alerts (the alert drill listens there)`,
    `  Logs                        ${relative(stack.logDir)}/<process>.log`,
    `  Try a delivery              npm run subscriber   (another terminal), then`,
    `                              npm run demo:traffic -- --base-url ${stack.apiUrl} --username ${stack.staff.username} --password '${stack.staff.password}' --configure-endpoint`,
    'Ctrl-C stops everything; the next run reuses the build (.tools/) and the data.',
  ];
  return `\n${lines.join('\n')}\n\n`;
}

async function runner(): Promise<void> {
  const started = Date.now();
  const log = (line: string) => process.stdout.write(`${line}\n`);
  // Stopped while starting (or building): no delivery is under way yet, so every process of the group may stop at once.
  const abortStart = () => process.kill(-process.pid, 'SIGTERM');
  process.once('message', abortStart);
  process.once('disconnect', abortStart);
  const dataDir = path.resolve(options['data-dir']);
  await refuseLeftoverStack(dataDir);
  const stack = await startStack({
    dataDir,
    ports: planPorts({
      basePort: options['base-port'],
      membershipBasePort: options['membership-base-port'] || undefined,
      api: options.api,
      delivery: options.delivery,
      history: options.history,
    }),
    tls: !options['no-tls'],
    shellEnv: process.env,
    log,
  });
  process.off('message', abortStart);
  process.off('disconnect', abortStart);
  // Where everything is, for scripts and tests that drive the stack (no secrets: they stay in their files).
  const description = path.join(dataDir, STACK_DESCRIPTION);
  // Written beside it and renamed: whoever waits for the file to appear reads it whole, never half written.
  await writeFile(`${description}.tmp`, `${JSON.stringify(describeStack(stack), null, 2)}\n`, { mode: 0o600 });
  await rename(`${description}.tmp`, description);
  process.stdout.write(banner(stack, (Date.now() - started) / 1000));
  const stop = () => void rm(description, { force: true }).then(() => stack.stop()).then(() => process.exit(0));
  process.once('message', stop);
  // The launcher is gone (killed hard): nobody can stop the stack any more, so stop it now.
  process.once('disconnect', stop);
}

runMain(runner);
