import { z } from 'zod';
import { secretWeakness } from '../secrets/secret-strength';

/**
 * The login provider's settings, from its environment (docker-compose.yml's `oidc-provider` service). Separate from
 * src/config-variables.ts: this program shares the image, not the service's configuration.
 */

const secret = (name: string) =>
  z
    .string({ error: `${name} is required` })
    .min(16, `${name} must be at least 16 characters`)
    .superRefine((value, ctx) => {
      const weakness = secretWeakness(value);
      if (weakness) ctx.addIssue({ code: 'custom', message: `${name} ${weakness}` });
    });

const schema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(1).max(65_535).default(8081),
  /** The URL browsers and the relying party reach the provider at: it names the tokens' issuer. */
  OIDC_ISSUER: z.url({ protocol: /^https?$/ }),
  OIDC_CLIENT_ID: z.string().min(1),
  OIDC_CLIENT_SECRET: secret('OIDC_CLIENT_SECRET'),
  /** The one redirect URI of the client (the Temporal UI's `/auth/sso/callback`). */
  OIDC_REDIRECT_URI: z.url({ protocol: /^https?$/ }),
  OIDC_STAFF_USERNAME: z.string().min(1).max(100),
  OIDC_STAFF_PASSWORD: secret('OIDC_STAFF_PASSWORD'),
  /** The RS256 signing key (a private JWK), generated there on the first start. */
  OIDC_SIGNING_KEY_FILE: z.string().min(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface ProviderSettings {
  host: string;
  port: number;
  issuer: string;
  client: { id: string; secret: string; redirectUri: string };
  staff: { username: string; password: string };
  signingKeyFile: string;
  logLevel: string;
}

export function readProviderSettings(env: NodeJS.ProcessEnv): ProviderSettings {
  const parsed = schema.safeParse(env);
  if (!parsed.success) throw new Error(`oidc-provider settings: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  const value = parsed.data;
  return {
    host: value.HOST,
    port: value.PORT,
    // Without a trailing slash: the issuer is compared as a string by relying parties.
    issuer: value.OIDC_ISSUER.replace(/\/+$/, ''),
    client: { id: value.OIDC_CLIENT_ID, secret: value.OIDC_CLIENT_SECRET, redirectUri: value.OIDC_REDIRECT_URI },
    staff: { username: value.OIDC_STAFF_USERNAME, password: value.OIDC_STAFF_PASSWORD },
    signingKeyFile: value.OIDC_SIGNING_KEY_FILE,
    logLevel: value.LOG_LEVEL,
  };
}
