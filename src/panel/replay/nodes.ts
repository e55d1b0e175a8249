import { LaneData } from '../model/trace';
import { upperBound } from './search';

/**
 * Per-operator views of a lane, built once per lane and cached: the entry
 * indices of each NodeId (in start order), their starts, and the running
 * sum of their weights. They answer "this operator's next event" and "its
 * events so far" with a binary search instead of a scan of the lane.
 */
export interface NodeEntries {
  idx: Int32Array;
  start: Float64Array;
  /** cum[k] = weight of the first k entries. */
  cum: Float64Array;
}

const cache = new WeakMap<LaneData, Map<number, NodeEntries>>();

export function nodeEntries(lane: LaneData): Map<number, NodeEntries> {
  const hit = cache.get(lane);
  if (hit) {
    return hit;
  }
  const counts = new Map<number, number>();
  for (let i = 0; i < lane.n; i++) {
    counts.set(lane.node[i], (counts.get(lane.node[i]) ?? 0) + 1);
  }
  const out = new Map<number, NodeEntries>();
  const fill = new Map<number, number>();
  for (const [node, c] of counts) {
    out.set(node, { idx: new Int32Array(c), start: new Float64Array(c), cum: new Float64Array(c + 1) });
    fill.set(node, 0);
  }
  for (let i = 0; i < lane.n; i++) {
    const node = lane.node[i];
    const e = out.get(node)!;
    const k = fill.get(node)!;
    e.idx[k] = i;
    e.start[k] = lane.first[i];
    e.cum[k + 1] = e.cum[k] + lane.weight[i];
    fill.set(node, k + 1);
  }
  cache.set(lane, out);
  return out;
}

/** Events of `node` in the lane that started by `us` (bins count whole once their first event has passed). */
export function countBy(lane: LaneData, node: number, us: number): number {
  const e = nodeEntries(lane).get(node);
  if (!e) {
    return 0;
  }
  return e.cum[upperBound(e.start, us)];
}

/** Events in the lane that started by `us`, over all operators. */
export function countAll(lane: LaneData, us: number): number {
  let total = 0;
  for (const e of nodeEntries(lane).values()) {
    total += e.cum[upperBound(e.start, us)];
  }
  return total;
}
