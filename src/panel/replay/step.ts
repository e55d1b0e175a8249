import { LaneData } from '../model/trace';
import { nodeEntries } from './nodes';
import { lowerBound, upperBound } from './search';

/**
 * Stepping the playhead to the next or previous event: over the given lanes
 * (all shown lanes, or the one lane the user picked), optionally only the
 * events of one operator. Binned rows step to their first event.
 */
export function stepTime(lanes: LaneData[], fromUs: number, dir: 1 | -1, node: number | null): number | null {
  let best: number | null = null;
  const better = (t: number) => best === null || (dir > 0 ? t < best : t > best);
  for (const lane of lanes) {
    const t = node === null ? stepLane(lane.first, lane.n, fromUs, dir) : stepNode(lane, node, fromUs, dir);
    if (t !== null && better(t)) {
      best = t;
    }
  }
  return best;
}

function stepLane(first: Float64Array, n: number, fromUs: number, dir: 1 | -1): number | null {
  // `first` is sorted when start is: a bin's first event is within its bin.
  if (dir > 0) {
    const i = upperBound(first, fromUs, 0, n);
    return i < n ? first[i] : null;
  }
  const i = lowerBound(first, fromUs, 0, n) - 1;
  return i >= 0 ? first[i] : null;
}

function stepNode(lane: LaneData, node: number, fromUs: number, dir: 1 | -1): number | null {
  const e = nodeEntries(lane).get(node);
  if (!e) {
    return null;
  }
  return stepLane(e.start, e.start.length, fromUs, dir);
}

/** The entry of a lane that is at exactly `us` (the one a step landed on), or -1. */
export function entryAt(lane: LaneData, us: number, node: number | null): number {
  let i = lowerBound(lane.first, us, 0, lane.n);
  for (; i < lane.n && lane.first[i] === us; i++) {
    if (node === null || lane.node[i] === node) {
      return i;
    }
  }
  return -1;
}
