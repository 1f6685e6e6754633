import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Credentials are redacted by path so that a careless `log.info({ req })` cannot leak them.
 * Lines go to stdout unless another destination is given (tests capture them). `fields`, when given, adds its fields
 * to every line (the trace's ids, src/tracing.ts).
 */
export function createLogger(level: string, name = 'donation-webhooks', destination?: DestinationStream, fields?: () => object): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    ...(fields && { mixin: fields }),
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
        // Temporal connection options (src/temporal/connection.ts), as a whole or under one key.
        'apiKey',
        '*.apiKey',
        'tls.clientCertPair.key',
        '*.tls.clientCertPair.key',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
