import { LaneData } from '../model/trace';
import { upperBound } from './search';

/**
 * Intervals (locks, waits, I/O) active at a time. Long intervals are kept in
 * a separate list per lane so that a lock held to the end of the trace does
 * not force a scan of every entry after it; short ones are found by walking
 * back from the playhead no further than the longest short interval.
 */
interface ActiveIndex {
  long: Int32Array;
  shortMaxUs: number;
}

const cache = new WeakMap<LaneData, ActiveIndex>();

function index(lane: LaneData): ActiveIndex {
  const hit = cache.get(lane);
  if (hit) {
    return hit;
  }
  const spanUs = lane.n > 0 ? Math.max(1, lane.maxEnd[lane.n - 1] - lane.start[0]) : 1;
  const cut = spanUs / 200;
  const long: number[] = [];
  let shortMaxUs = 0;
  for (let i = 0; i < lane.n; i++) {
    const d = lane.end[i] - lane.start[i];
    if (d > cut) {
      long.push(i);
    } else {
      shortMaxUs = Math.max(shortMaxUs, d);
    }
  }
  const out = { long: Int32Array.from(long), shortMaxUs };
  cache.set(lane, out);
  return out;
}

/** Indices of entries with start ≤ us ≤ end, in start order, at most `limit` of them. */
export function activeAt(lane: LaneData, us: number, limit = 200): number[] {
  const ix = index(lane);
  const out: number[] = [];
  for (const i of ix.long) {
    if (lane.start[i] > us) {
      break;
    }
    if (lane.end[i] >= us) {
      out.push(i);
    }
  }
  const hi = upperBound(lane.start, us, 0, lane.n);
  const shortOnes: number[] = [];
  for (let i = hi - 1; i >= 0 && lane.start[i] >= us - ix.shortMaxUs; i--) {
    if (lane.end[i] >= us && lane.end[i] - lane.start[i] <= ix.shortMaxUs) {
      shortOnes.push(i);
    }
  }
  const merged = out.concat(shortOnes.reverse());
  const seen = new Set<number>();
  const uniq = merged.filter((i) => (seen.has(i) ? false : (seen.add(i), true)));
  uniq.sort((a, b) => a - b);
  return uniq.slice(0, limit);
}
