import { z } from 'zod';

/**
 * How the demo's test subscriber answers webhook deliveries, as pure rules: the mode decides the answer from how
 * often this subscriber has seen the event's id. In `refuse` the subscriber stops listening for a while.
 */

export const SUBSCRIBER_MODES = ['ok', 'fail', 'flaky', 'slow', 'refuse', 'redirect'] as const;
export type SubscriberMode = (typeof SUBSCRIBER_MODES)[number];

export interface ModeSettings {
  mode: SubscriberMode;
  /** flaky: attempts per event id that fail before one succeeds. */
  failures: number;
  /** slow: seconds before answering (the sender gives up after 30). */
  delaySeconds: number;
  /** refuse: seconds without a listener before coming back in the previous mode. */
  refuseSeconds: number;
}

export const DEFAULT_MODE_SETTINGS: ModeSettings = { mode: 'ok', failures: 1, delaySeconds: 35, refuseSeconds: 60 };

/** The body of `POST /_control`, also what a CLI flag or a typed command becomes. */
export const modeChangeInput = z.object({
  mode: z.enum(SUBSCRIBER_MODES),
  failures: z.number().int().min(0).max(100).optional(),
  delay_seconds: z.number().min(0).max(600).optional(),
  refuse_seconds: z.number().min(0).max(3600).optional(),
});
export type ModeChange = z.output<typeof modeChangeInput>;

export function applyModeChange(current: ModeSettings, change: ModeChange): ModeSettings {
  return {
    mode: change.mode,
    failures: change.failures ?? current.failures,
    delaySeconds: change.delay_seconds ?? current.delaySeconds,
    refuseSeconds: change.refuse_seconds ?? current.refuseSeconds,
  };
}

/** The parameter a mode takes when typed as `<mode> <number>`. */
const MODE_PARAMETER: Partial<Record<SubscriberMode, keyof ModeChange>> = {
  flaky: 'failures',
  slow: 'delay_seconds',
  refuse: 'refuse_seconds',
};

/** A command typed into the subscriber's terminal, such as `flaky 3`, `slow 35`, `refuse 20` or `ok`. */
export function parseModeCommand(line: string): { change: ModeChange } | { problem: string } {
  const [mode, parameter, ...rest] = line.trim().split(/\s+/);
  const usage = `commands: ${SUBSCRIBER_MODES.join(', ')}; flaky <failures>, slow <seconds>, refuse <seconds>`;
  const key = MODE_PARAMETER[mode as SubscriberMode];
  if (rest.length > 0 || (parameter !== undefined && !key)) return { problem: usage };
  const parsed = modeChangeInput.safeParse({ mode, ...(key && parameter !== undefined ? { [key]: Number(parameter) } : {}) });
  return parsed.success ? { change: parsed.data } : { problem: usage };
}

export function describeSettings(settings: ModeSettings): string {
  switch (settings.mode) {
    case 'flaky':
      return `flaky (each event fails ${settings.failures}x, then 200)`;
    case 'slow':
      return `slow (answers 200 after ${settings.delaySeconds} s)`;
    case 'refuse':
      return `refuse (connections refused for ${settings.refuseSeconds} s)`;
    default:
      return settings.mode;
  }
}

export interface ModeAnswer {
  status: number;
  body: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** The answer to the `seen`-th delivery (1-based) of one event id, in every mode that answers. */
export function answerFor(settings: ModeSettings, seen: number): ModeAnswer {
  switch (settings.mode) {
    case 'ok':
      return { status: 200, body: 'ok' };
    case 'refuse':
      // Only a request already on its way while the listener closes gets here.
      return { status: 503, body: 'test subscriber: going down' };
    case 'fail':
      return { status: 500, body: 'test subscriber: mode fail' };
    case 'flaky':
      return seen <= settings.failures
        ? { status: 500, body: `test subscriber: flaky, attempt ${seen} of ${settings.failures} failing` }
        : { status: 200, body: `ok after ${seen - 1} failures` };
    case 'slow':
      return { status: 200, body: 'ok, but late', delayMs: settings.delaySeconds * 1000 };
    case 'redirect':
      return { status: 302, body: '', headers: { Location: '/elsewhere' } };
  }
}
