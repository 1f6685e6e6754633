/**
 * Whether a delivery worker has room for more deliveries, with a gap: full once 90 % of its attempt slots are in
 * use, with room again at half. A relay beside the worker starts eagerly, and leads, only while it has room
 * (src/runtime/components.ts): eager starts run their first attempt on this worker, so when a slow subscriber fills
 * its slots, new deliveries must start the usual way and go to the other replicas' workers rather than queue here.
 * The gap keeps the lead from passing back and forth at the edge.
 */
export function attemptRoom(slots: number, inUse: () => number): () => boolean {
  let full = false;
  return () => {
    const used = inUse();
    if (full ? used <= slots * 0.5 : used >= slots * 0.9) full = !full;
    return !full;
  };
}
