import { LaneData, WindowUs } from '../model/trace';
import { nodeEntries } from './nodes';
import { lowerBound, overlapRange } from './search';

/**
 * Level of detail for drawing lanes on a canvas. A lane whose visible
 * entries fit a few per pixel is drawn entry by entry ("marks"); a denser one
 * is reduced to one column per pixel ("columns") holding the events starting
 * there, how many intervals cover it, and its majority operator. Reduction
 * uses a pyramid of pre-binned levels built once per lane, so a redraw costs
 * about the number of pixel columns, not the number of events; only windows
 * narrower than the finest bin (where few entries are visible anyway) are
 * reduced from the entries themselves.
 */

export const FINE_BINS = 1 << 16;
/** Draw entry by entry while there are at most this many per pixel column. */
export const MARKS_PER_PX = 3;

export interface Columns {
  width: number;
  /** Events starting in each column. */
  count: Float32Array;
  /** Intervals overlapping each column (interval lanes). */
  cover: Float32Array;
  /** Majority operator of each column (-1 unmatched). */
  dom: Int32Array;
  maxCount: number;
  maxCover: number;
}

interface Level {
  binUs: number;
  count: Float32Array;
  cover: Float32Array;
  dom: Int32Array;
  domW: Float32Array;
}

export interface Pyramid {
  fromUs: number;
  toUs: number;
  levels: Level[];
}

function newColumns(width: number): Columns {
  return {
    width,
    count: new Float32Array(width),
    cover: new Float32Array(width),
    dom: new Int32Array(width).fill(-1),
    maxCount: 0,
    maxCover: 0,
  };
}

/** Boyer-Moore majority vote: one pass, O(1) state per bin. */
function vote(dom: Int32Array, domW: Float32Array, b: number, node: number, w: number): void {
  if (dom[b] === node) {
    domW[b] += w;
  } else if (domW[b] <= w) {
    dom[b] = node;
    domW[b] = w - domW[b];
  } else {
    domW[b] -= w;
  }
}

export function buildPyramid(lane: LaneData, bounds: WindowUs, fine = FINE_BINS): Pyramid {
  const fromUs = bounds.fromUs;
  const toUs = Math.max(bounds.toUs, fromUs + 1);
  const binUs = (toUs - fromUs) / fine;
  const count = new Float32Array(fine);
  const dom = new Int32Array(fine).fill(-1);
  const domW = new Float32Array(fine);
  const diff = new Float32Array(fine + 1);
  const bin = (us: number) => Math.min(fine - 1, Math.max(0, Math.floor((us - fromUs) / binUs)));
  for (let i = 0; i < lane.n; i++) {
    const b = bin(lane.start[i]);
    count[b] += lane.weight[i];
    vote(dom, domW, b, lane.node[i], lane.weight[i]);
    if (lane.end[i] > lane.start[i]) {
      diff[b] += 1;
      diff[bin(lane.end[i]) + 1] -= 1;
    }
  }
  const cover = new Float32Array(fine);
  let run = 0;
  for (let b = 0; b < fine; b++) {
    run += diff[b];
    cover[b] = run;
  }
  const levels: Level[] = [{ binUs, count, cover, dom, domW }];
  while (levels[levels.length - 1].count.length > 256) {
    levels.push(coarsen(levels[levels.length - 1]));
  }
  return { fromUs, toUs, levels };
}

function coarsen(l: Level): Level {
  const n = l.count.length >> 1;
  const out: Level = {
    binUs: l.binUs * 2,
    count: new Float32Array(n),
    cover: new Float32Array(n),
    dom: new Int32Array(n),
    domW: new Float32Array(n),
  };
  for (let b = 0; b < n; b++) {
    const a = 2 * b;
    out.count[b] = l.count[a] + l.count[a + 1];
    out.cover[b] = Math.max(l.cover[a], l.cover[a + 1]);
    const first = l.domW[a] >= l.domW[a + 1] ? a : a + 1;
    out.dom[b] = l.dom[first];
    out.domW[b] = l.domW[first];
  }
  return out;
}

function finish(c: Columns): Columns {
  for (let x = 0; x < c.width; x++) {
    c.maxCount = Math.max(c.maxCount, c.count[x]);
    c.maxCover = Math.max(c.maxCover, c.cover[x]);
  }
  return c;
}

/** Columns from the pyramid; null when the window is finer than its finest level. */
export function columnsFromPyramid(p: Pyramid, w: WindowUs, width: number): Columns | null {
  const pxUs = (w.toUs - w.fromUs) / Math.max(width, 1);
  let level: Level | null = null;
  for (const l of p.levels) {
    if (l.binUs <= pxUs) {
      level = l;
    }
  }
  if (!level) {
    return null;
  }
  const c = newColumns(width);
  const domW = new Float32Array(width);
  const b0 = Math.max(0, Math.floor((w.fromUs - p.fromUs) / level.binUs));
  const b1 = Math.min(level.count.length - 1, Math.floor((w.toUs - p.fromUs) / level.binUs));
  for (let b = b0; b <= b1; b++) {
    const us = p.fromUs + b * level.binUs;
    const x = Math.min(width - 1, Math.max(0, Math.floor(((us - w.fromUs) / (w.toUs - w.fromUs)) * width)));
    if (level.count[b] > 0) {
      c.count[x] += level.count[b];
      vote(c.dom, domW, x, level.dom[b], level.domW[b] || level.count[b]);
    }
    c.cover[x] = Math.max(c.cover[x], level.cover[b]);
  }
  return finish(c);
}

/** Reduces entries [lo, hi) (or the given entry indices) to columns directly. */
export function columnsFromEntries(
  lane: LaneData,
  w: WindowUs,
  width: number,
  lo: number,
  hi: number,
  only?: Int32Array
): Columns {
  const c = newColumns(width);
  const domW = new Float32Array(width);
  const diff = new Float32Array(width + 1);
  const k = width / Math.max(w.toUs - w.fromUs, 1e-9);
  for (let j = lo; j < hi; j++) {
    const i = only ? only[j] : j;
    const s = lane.start[i];
    const e = lane.end[i];
    if (e < w.fromUs || s > w.toUs) {
      continue;
    }
    const x0 = Math.min(width - 1, Math.max(0, Math.floor((s - w.fromUs) * k)));
    if (s >= w.fromUs) {
      c.count[x0] += lane.weight[i];
      vote(c.dom, domW, x0, lane.node[i], lane.weight[i]);
    }
    if (e > s) {
      const x1 = Math.min(width - 1, Math.max(0, Math.floor((e - w.fromUs) * k)));
      diff[x0] += 1;
      diff[x1 + 1] -= 1;
    }
  }
  let run = 0;
  for (let x = 0; x < width; x++) {
    run += diff[x];
    c.cover[x] = run;
  }
  return finish(c);
}

/** What to draw for one lane in one window. */
export type LaneDrawing =
  { kind: 'marks'; lo: number; hi: number; only?: Int32Array } | { kind: 'columns'; columns: Columns };

/**
 * Chooses marks or columns for a lane in a window, optionally restricted to
 * one operator's entries (`node`), using the pyramid when it is given.
 */
export function drawingFor(
  lane: LaneData,
  w: WindowUs,
  width: number,
  node: number | null,
  pyramid: Pyramid | null
): LaneDrawing {
  const [lo, hi] = overlapRange(lane, w.fromUs, w.toUs);
  if (node !== null) {
    const e = nodeEntries(lane).get(node);
    if (!e) {
      return { kind: 'marks', lo: 0, hi: 0 };
    }
    const a = lowerBound(e.idx, lo);
    const b = lowerBound(e.idx, hi);
    if (b - a <= MARKS_PER_PX * width) {
      return { kind: 'marks', lo: a, hi: b, only: e.idx };
    }
    return { kind: 'columns', columns: columnsFromEntries(lane, w, width, a, b, e.idx) };
  }
  if (hi - lo <= MARKS_PER_PX * width) {
    return { kind: 'marks', lo, hi };
  }
  const fromPyramid = pyramid ? columnsFromPyramid(pyramid, w, width) : null;
  return { kind: 'columns', columns: fromPyramid ?? columnsFromEntries(lane, w, width, lo, hi) };
}
