import { loadConfig } from './config';
import type { startTracing } from './observability/tracing/start-tracing';
import type { runRole } from './roles';
import { SERVICE_NAME, SERVICE_VERSION } from './service-info';

/*
 * The start command: `node dist/src/main.js [role]` (the roles: src/roles.ts). It reads the configuration first and,
 * when the OTEL_* settings switch tracing on, starts it before the roles' modules are loaded: http and pg are
 * instrumented as they are first required. Without tracing nothing of OpenTelemetry is loaded at all.
 */

function main(): void {
  const roleName = process.argv[2] ?? 'all';
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const tracing =
    config.tracing &&
    (require('./observability/tracing/start-tracing') as { startTracing: typeof startTracing }).startTracing(config.tracing, {
      serviceName: `${SERVICE_NAME}-${roleName}`,
      serviceVersion: SERVICE_VERSION,
    });
  void (require('./roles') as { runRole: typeof runRole }).runRole(roleName, config, tracing);
}

main();
