/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same sequence on every machine, so a
 * generated demo run can be reproduced. Not for anything secret.
 */
export interface Random {
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** One of the keys, each as likely as its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
}

export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (probability) => next() < probability,
    pick(items) {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)];
    },
    weighted(weights) {
      const entries = (Object.entries(weights) as [keyof typeof weights, number][]).filter(([, weight]) => weight > 0);
      if (entries.length === 0) throw new Error('weighted pick without a positive weight');
      let point = next() * entries.reduce((sum, [, weight]) => sum + weight, 0);
      for (const [key, weight] of entries) {
        point -= weight;
        if (point < 0) return key;
      }
      // Only floating-point rounding ends up here.
      return entries[entries.length - 1][0];
    },
  };
}
