import { type Config, loadConfig } from '../config';
import { localSecretsKeys } from '../secrets/local-secret';
import { createKeyring, SecretUnreadable } from '../secrets/keyring';
import { resealEndpointSecrets } from '../webhook-endpoint/endpoint-store';
import { openDatabase } from './database';

/*
 * npm run secrets:re-encrypt
 * Seals every stored secret (the webhook endpoint's Basic-auth password and signing secret) with the first key of
 * SECRETS_KEYS: values under an older key, and plain values stored before encryption existed. All or nothing, in
 * one transaction. Run it after putting a new key first, and again before dropping an old key: "0 values" then
 * proves that nothing depends on it any more (docs/secrets.md#secrets_keys-the-endpoints-secrets-at-rest).
 */

export interface ReencryptIo {
  config: Config;
  stdout: (line: string) => void;
}

/** Returns the exit code. */
export async function reencryptSecrets({ config, stdout }: ReencryptIo): Promise<number> {
  const keys = config.secrets.generated ? await localSecretsKeys(config.database.dataDir) : config.secrets.keys;
  const keyring = createKeyring(keys);
  const { db, close } = await openDatabase(config);
  try {
    const { rows, values } = await resealEndpointSecrets(db, keyring);
    stdout(`Re-encrypted ${values} secret value(s) of ${rows} webhook endpoint(s); every stored secret is now sealed with key ${keyring.sealingKeyId}.`);
    return 0;
  } catch (err) {
    if (!(err instanceof SecretUnreadable)) throw err;
    stdout(`Nothing changed: ${err.message}. Add that key to SECRETS_KEYS (after the first) and run again.`);
    return 1;
  } finally {
    await close();
  }
}

if (require.main === module) {
  const exit = (code: number) => process.exit(code);
  const fail = (err: unknown) => {
    process.stderr.write(`secrets:re-encrypt failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  };
  Promise.resolve()
    .then(() => reencryptSecrets({ config: loadConfig(), stdout: (line) => process.stdout.write(`${line}\n`) }))
    .then(exit, fail);
}
