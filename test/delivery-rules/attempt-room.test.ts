import { attemptRoom } from '../../src/delivery-rules/attempt-room';

test('a worker is full from 90 % of its attempt slots in use and has room again at half, not before', () => {
  let inUse = 0;
  const hasRoom = attemptRoom(100, () => inUse);
  const seen = [0, 89, 90, 70, 51, 50, 89, 95, 100, 60, 40].map((used) => {
    inUse = used;
    return hasRoom();
  });
  expect(seen).toEqual([true, true, false, false, false, true, true, false, false, false, true]);
});

test('a worker with few slots fills at its last ones', () => {
  let inUse = 0;
  const hasRoom = attemptRoom(10, () => inUse);
  expect([8, 9, 6, 5].map((used) => ((inUse = used), hasRoom()))).toEqual([true, false, false, true]);
});
