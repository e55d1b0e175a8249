import { LaneData, WindowUs } from '../model/trace';
import { overlapRange } from './search';

/** The most entries a hit test looks at around the pointer. */
const MAX_CANDIDATES = 5000;

/**
 * The entry of a lane under pointer x (px in the lane's drawing area), within
 * tolPx: the shortest entry within reach (so a point beside a long interval
 * can be picked), the nearest among equals. Entries of other operators are skipped when `node` filters
 * the lanes. Returns -1 when nothing is close enough.
 */
export function hitEntry(
  lane: LaneData,
  w: WindowUs,
  width: number,
  x: number,
  tolPx: number,
  node: number | null
): number {
  const pxUs = (w.toUs - w.fromUs) / Math.max(width, 1);
  const us = w.fromUs + x * pxUs;
  const tolUs = tolPx * pxUs;
  const [lo, hi] = overlapRange(lane, us - tolUs, us + tolUs);
  let best = -1;
  let bestDist = Infinity;
  let bestLen = Infinity;
  const from = Math.max(lo, hi - MAX_CANDIDATES);
  for (let i = hi - 1; i >= from; i--) {
    if (node !== null && lane.node[i] !== node) {
      continue;
    }
    const s = lane.start[i];
    // what is drawn: at least one pixel wide
    const e = Math.max(lane.end[i], s + pxUs);
    const dist = us < s ? s - us : us > e ? us - e : 0;
    const len = e - s;
    if (dist > tolUs) {
      continue;
    }
    // the shortest entry within reach wins: a point beside a long lock is what the pointer is after
    if (len < bestLen || (len === bestLen && dist < bestDist)) {
      best = i;
      bestDist = dist;
      bestLen = len;
    }
  }
  return best;
}
