import { startSubscriber, type Subscriber, type SubscriberOptions } from '../../src/demo/subscriber-server';

/**
 * Subscribers that the tests of a file start as they need them, each closed after the test that started it. Call it
 * at the top level of the file (it registers an afterEach, run in the order of the file's hooks); it returns what
 * starts one.
 */
export function subscribersPerTest(): (options: SubscriberOptions) => Promise<Subscriber> {
  const open: Subscriber[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((subscriber) => subscriber.close()));
  });
  return async (options) => {
    const subscriber = await startSubscriber(options);
    open.push(subscriber);
    return subscriber;
  };
}
