import { LaneData, WindowUs } from '../model/trace';
import { clampWindow, span } from '../replay/scale';
import { lowerBound } from '../replay/search';
import { EvidenceRef } from './model';

/**
 * Where a finding's evidence is on the timeline: the lane entry an evidence
 * id names, and the window that shows a set of evidence events. Pure, so
 * jest covers it.
 *
 * An id "<lane>/<index>" is the entry's position in the whole lane of the
 * stored trace. Raw lane frames carry that position in their hidden `index`
 * field (docs/frames.md §3.5), so the id resolves exactly in any window. A
 * binned frame has no events to point at: the evidence resolves to the bin
 * that holds it (same operator, its time inside the bin). Frames without an
 * `index` field (older backends) are matched by start time and operator.
 */

const byIndex = new WeakMap<LaneData, Map<number, number> | null>();

/** Lane entry by whole-lane index, from the frame's `index` field (null when the frame has none). */
function indexMap(lane: LaneData): Map<number, number> | null {
  if (!byIndex.has(lane)) {
    const f = lane.frame.fields.find((x) => x.name === 'index');
    let m: Map<number, number> | null = null;
    if (f && !lane.binned) {
      m = new Map();
      for (let i = 0; i < lane.n; i++) {
        const v = f.values[lane.row[i]];
        if (v !== null && v !== undefined) {
          m.set(Number(v), i);
        }
      }
    }
    byIndex.set(lane, m);
  }
  return byIndex.get(lane) ?? null;
}

/** The entry of `lane` that evidence `ev` names, or -1 when the lane does not hold it. */
export function entryOfEvidence(lane: LaneData | undefined, ev: EvidenceRef): number {
  if (!lane || lane.name !== ev.lane || lane.n === 0) {
    return -1;
  }
  const node = ev.nodeId ?? -1;
  if (lane.binned) {
    return binOf(lane, ev.t, node);
  }
  const m = indexMap(lane);
  if (m) {
    return m.get(ev.index) ?? -1;
  }
  // no index field: the entry starting at t of the same operator (the first of equals)
  for (let i = lowerBound(lane.start, ev.t, 0, lane.n); i < lane.n && lane.start[i] === ev.t; i++) {
    if (lane.node[i] === node) {
      return i;
    }
  }
  return -1;
}

/** The bin of `node` whose interval holds t (bins are [start, end)). */
function binOf(lane: LaneData, t: number, node: number): number {
  // bins start at most one bin width before t
  const from = lowerBound(lane.start, t - Math.max(lane.binWidthUs, 1), 0, lane.n);
  for (let i = from; i < lane.n && lane.start[i] <= t; i++) {
    if (lane.node[i] === node && t < Math.max(lane.end[i], lane.start[i] + 1)) {
      return i;
    }
  }
  return -1;
}

export interface ZoomOptions {
  /** Padding on each side, as a share of the evidence's span. */
  pad: number;
  /** The narrowest window, as a share of the whole trace (so one point event keeps some context). */
  minShare: number;
}

const ZOOM: ZoomOptions = { pad: 0.08, minShare: 0.04 };

/**
 * The window that shows all of `events` with a margin, clamped to the trace;
 * null when there are none. A single instant (or a very short span) gets at
 * least `minShare` of the trace, centred on it.
 */
export function evidenceWindow(
  events: ReadonlyArray<{ t: number; end: number }>,
  bounds: WindowUs,
  opts: Partial<ZoomOptions> = {}
): WindowUs | null {
  if (events.length === 0) {
    return null;
  }
  const o = { ...ZOOM, ...opts };
  let lo = Infinity;
  let hi = -Infinity;
  for (const e of events) {
    lo = Math.min(lo, e.t);
    hi = Math.max(hi, e.end, e.t);
  }
  const s = hi - lo;
  const want = Math.max(s * (1 + 2 * o.pad), span(bounds) * o.minShare);
  const mid = (lo + hi) / 2;
  return clampWindow({ fromUs: mid - want / 2, toUs: mid + want / 2 }, bounds);
}

/**
 * The evidence to step to from `current` (-1: none yet) in direction `dir`,
 * or `current` itself at either end (stepping does not wrap: the ends are
 * where the evidence starts and stops).
 */
export function stepEvidence(count: number, current: number, dir: 1 | -1): number {
  if (count === 0) {
    return -1;
  }
  if (current < 0) {
    return dir > 0 ? 0 : count - 1;
  }
  return Math.max(0, Math.min(count - 1, current + dir));
}
