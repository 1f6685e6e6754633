import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import type { Logger } from '../logger';

const PINO_LEVELS = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * The Temporal SDK's logger, writing through ours: the worker's own messages (state changes, failed activities and
 * workflow tasks) become JSON lines like every other, with the SDK's fields (workflowId, activityType, attempt, …).
 * The SDK reports errors under `error`; pino serialises them (message, stack) only under `err`.
 */
export function temporalLogger(log: Logger): TemporalLogger {
  const sdkLog = log.child({ component: 'temporal-sdk' });
  const write = (level: LogLevel, message: string, meta: LogMetadata = {}) => {
    const { error, ...fields } = meta;
    sdkLog[PINO_LEVELS[level]](error === undefined ? fields : { ...fields, err: error }, message);
  };
  return {
    log: write,
    trace: (message, meta) => write('TRACE', message, meta),
    debug: (message, meta) => write('DEBUG', message, meta),
    info: (message, meta) => write('INFO', message, meta),
    warn: (message, meta) => write('WARN', message, meta),
    error: (message, meta) => write('ERROR', message, meta),
  };
}
