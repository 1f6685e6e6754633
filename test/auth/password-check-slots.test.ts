import { createPasswordCheckSlots } from '../../src/auth/password-check-slots';
import { ApiError } from '../../src/shared/errors';

/*
 * The bound on password checks at once, with checks that end when the test says: which ones run, in which order,
 * and which are refused.
 */

/** A check that runs until `end()` is called, recording when it started. */
function gatedCheck(started: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { run: async () => (started.push(name), await ended, name), end: () => end() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('at most the bound run at once; known clients are next before strangers who waited longer', async () => {
  const slots = createPasswordCheckSlots(2);
  const started: string[] = [];
  const checks = Object.fromEntries(['a', 'b', 'stranger', 'known'].map((name) => [name, gatedCheck(started, name)]));
  const results = [
    slots.run(false, checks.a.run),
    slots.run(false, checks.b.run),
    slots.run(false, checks.stranger.run),
    slots.run(true, checks.known.run),
  ];
  await settle();
  expect(started).toEqual(['a', 'b']);
  checks.a.end();
  await settle();
  expect(started).toEqual(['a', 'b', 'known']);
  checks.b.end();
  await settle();
  expect(started).toEqual(['a', 'b', 'known', 'stranger']);
  checks.known.end();
  checks.stranger.end();
  expect(await Promise.all(results)).toEqual(['a', 'b', 'stranger', 'known']);
});

test('a failing check frees its slot', async () => {
  const slots = createPasswordCheckSlots(1);
  await expect(slots.run(false, () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
  expect(await slots.run(false, async () => 'next')).toBe('next');
});

test('the strangers’ line is bounded (16 per slot): beyond it 503 at once; known clients always wait their turn', async () => {
  const slots = createPasswordCheckSlots(1);
  const started: string[] = [];
  const running = gatedCheck(started, 'running');
  const first = slots.run(false, running.run);
  const waiting = Array.from({ length: 16 }, (_, i) => slots.run(false, async () => `waited-${i}`));
  const refused = await slots.run(false, async () => 'never').catch((err: ApiError) => err);
  expect(refused).toBeInstanceOf(ApiError);
  expect(refused).toMatchObject({ status: 503, code: 'too_many_password_checks', headers: { 'Retry-After': '1' } });
  const known = slots.run(true, async () => 'known');
  running.end();
  expect(await Promise.all([first, known, ...waiting])).toEqual(['running', 'known', ...waiting.map((_, i) => `waited-${i}`)]);
});
