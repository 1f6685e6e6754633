import { EventLoad } from '../../bench/support/platform-load';
import { Receiver } from '../../bench/support/receiver';

// The open loop's lead-in (bench/README.md): the load runs at its rate before it is measured, without a pause between.

/** A load whose offers are only noted, and how many were made when the measured part began. */
function notedLoad() {
  const offered: string[] = [];
  const load = new EventLoad(
    async (key) => {
      offered.push(key);
      return true;
    },
    new Receiver(),
    'run',
  );
  let offeredWhenMeasuring: number | undefined;
  const measuring = () => {
    offeredWhenMeasuring = offered.length;
  };
  return { load, offered, measuring, offeredWhenMeasuring: () => offeredWhenMeasuring };
}

test('an open loop with a lead-in offers its events too, and measures only those due after it', async () => {
  const { load, offered, measuring, offeredWhenMeasuring } = notedLoad();
  const timings = await load.openLoop(1000, 0.02, { leadInS: 0.01, measuring });
  expect(offered).toHaveLength(30);
  expect(offeredWhenMeasuring()).toBe(10);
  expect(timings.map((timing) => timing.key)).toEqual(offered.slice(10));
});

test('without a lead-in every event is measured, from the first', async () => {
  const { load, offered, measuring, offeredWhenMeasuring } = notedLoad();
  const timings = await load.openLoop(1000, 0.01, { measuring });
  expect(offeredWhenMeasuring()).toBe(0);
  expect(timings.map((timing) => timing.key)).toEqual(offered);
  expect(timings).toHaveLength(10);
});
