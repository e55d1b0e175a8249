/** Binary searches over sorted Float64Arrays: the lanes' start and maxEnd columns. */

/** First index i in [lo, hi) with a[i] >= x (hi when none). */
export function lowerBound(a: ArrayLike<number>, x: number, lo = 0, hi = a.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/** First index i in [lo, hi) with a[i] > x (hi when none). */
export function upperBound(a: ArrayLike<number>, x: number, lo = 0, hi = a.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] <= x) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/** The columns of a lane the range functions need. */
export interface Sorted {
  n: number;
  start: Float64Array;
  maxEnd: Float64Array;
}

/**
 * The index range [lo, hi) of entries that may overlap [fromUs, toUs]: every
 * entry starting by toUs whose running maximum end reaches fromUs. Entries
 * inside the range that end before fromUs are possible (a long interval
 * earlier raised maxEnd) and are cheap to skip while drawing.
 */
export function overlapRange(lane: Sorted, fromUs: number, toUs: number): [number, number] {
  const lo = lowerBound(lane.maxEnd, fromUs, 0, lane.n);
  const hi = upperBound(lane.start, toUs, lo, lane.n);
  return [lo, hi];
}
