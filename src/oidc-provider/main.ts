import { createLogger } from '../logger';
import { operatorProvider } from './provider';
import { readProviderSettings } from './settings';
import { persistedSigningKey } from './signing-key';

/**
 * `node dist/src/oidc-provider/main.js`: the OpenID Provider the Temporal UI signs operators in with
 * (docs/observability.md#temporal-ui). Settings from the environment (src/oidc-provider/settings.ts).
 */
async function main(): Promise<void> {
  const settings = readProviderSettings(process.env);
  const log = createLogger(settings.logLevel, 'oidc-provider');
  const provider = operatorProvider(settings, await persistedSigningKey(settings.signingKeyFile), log);
  const server = provider.listen(settings.port, settings.host, () => {
    log.info({ issuer: settings.issuer, client: settings.client.id }, `OpenID Provider on ${settings.host}:${settings.port}`);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => server.close(() => process.exit(0)));
  }
}

main().catch((err: Error) => {
  process.stderr.write(`oidc-provider: ${err.message}\n`);
  process.exit(1);
});
