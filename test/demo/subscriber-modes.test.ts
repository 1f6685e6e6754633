import { answerFor, applyModeChange, DEFAULT_MODE_SETTINGS, parseModeCommand } from '../../src/demo/subscriber-modes';

test('a typed command is a mode with its optional parameter', () => {
  expect(parseModeCommand('ok')).toEqual({ change: { mode: 'ok' } });
  expect(parseModeCommand(' flaky 3 ')).toEqual({ change: { mode: 'flaky', failures: 3 } });
  expect(parseModeCommand('slow 35')).toEqual({ change: { mode: 'slow', delay_seconds: 35 } });
  expect(parseModeCommand('refuse 0.5')).toEqual({ change: { mode: 'refuse', refuse_seconds: 0.5 } });
  for (const bad of ['sleepy', 'ok 3', 'flaky x', 'flaky 1.5', 'slow 3 4', 'refuse -1']) {
    expect(parseModeCommand(bad)).toEqual({ problem: expect.stringContaining('commands:') });
  }
});

test('a change keeps the parameters it does not mention', () => {
  const flaky = applyModeChange(DEFAULT_MODE_SETTINGS, { mode: 'flaky', failures: 4 });
  expect(applyModeChange(flaky, { mode: 'slow' })).toEqual({ mode: 'slow', failures: 4, delaySeconds: 35, refuseSeconds: 60 });
});

test('each mode answers as its name says', () => {
  const settings = (mode: typeof DEFAULT_MODE_SETTINGS.mode) => ({ ...DEFAULT_MODE_SETTINGS, mode });
  expect(answerFor(settings('ok'), 1).status).toBe(200);
  expect(answerFor(settings('fail'), 9).status).toBe(500);
  expect([1, 2, 3].map((seen) => answerFor(settings('flaky'), seen).status)).toEqual([500, 200, 200]);
  expect([1, 2, 3].map((seen) => answerFor({ ...settings('flaky'), failures: 2 }, seen).status)).toEqual([500, 500, 200]);
  expect(answerFor(settings('slow'), 1)).toMatchObject({ status: 200, delayMs: 35_000 });
  expect(answerFor(settings('redirect'), 1)).toMatchObject({ status: 302, headers: { Location: '/elsewhere' } });
});
