import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Credentials are redacted by path so that a careless `log.info({ req })` cannot leak them.
 */
export function createLogger(level: string, name = 'donation-webhooks'): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        'password',
        '*.password',
        'basic_auth_password',
        '*.basic_auth_password',
        'signing_secret',
        '*.signing_secret',
        'authorization',
        '*.authorization',
        '*.headers.authorization',
        'access',
        'refresh',
        'token',
        '*.token',
      ],
      censor: '[redacted]',
    },
  });
}
