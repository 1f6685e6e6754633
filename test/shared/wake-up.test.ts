import { createWakeUp } from '../../src/shared/wake-up';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** Whether the promise has settled once pending microtasks ran (without moving the clock). */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

test('a wait that may end early ends on a notification, or at once if one came before it', async () => {
  const wakeUp = createWakeUp();
  const waiting = wakeUp.wait(60_000, { early: true });
  expect(await settled(waiting)).toBe(false);
  wakeUp.notify();
  expect(await settled(waiting)).toBe(true);

  wakeUp.notify();
  expect(await settled(wakeUp.wait(60_000, { early: true }))).toBe(true);
  // That wait took the notification: the next one sleeps again.
  expect(await settled(wakeUp.wait(60_000, { early: true }))).toBe(false);
});

test('a wait that may not end early runs its full time despite notifications', async () => {
  const wakeUp = createWakeUp();
  const waiting = wakeUp.wait(5_000, { early: false });
  wakeUp.notify();
  jest.advanceTimersByTime(4_999);
  expect(await settled(waiting)).toBe(false);
  jest.advanceTimersByTime(1);
  expect(await settled(waiting)).toBe(true);
});

test('stop ends the current wait, early or not, and every later one', async () => {
  const wakeUp = createWakeUp();
  const waiting = wakeUp.wait(60_000, { early: false });
  wakeUp.stop();
  expect(await settled(waiting)).toBe(true);
  expect(await settled(wakeUp.wait(60_000, { early: false }))).toBe(true);
  expect(jest.getTimerCount()).toBe(0);
});
