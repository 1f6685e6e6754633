import { createLogger, type Logger } from '../../src/logger';

export interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLogs {
  /** The service's logger (redaction included), at trace level, writing here instead of stdout. */
  log: Logger;
  /** Every line as written, to search for strings that must never appear. */
  text(): string;
  entries(): LogEntry[];
}

export function captureLogs(): CapturedLogs {
  const lines: string[] = [];
  const log = createLogger('trace', 'donation-webhooks', { write: (line: string) => void lines.push(line) });
  return {
    log,
    text: () => lines.join(''),
    entries: () => lines.map((line) => JSON.parse(line) as LogEntry),
  };
}
