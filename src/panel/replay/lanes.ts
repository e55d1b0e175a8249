import { DataFrame, FieldType } from '@grafana/data';

/** One state of a lane, times in epoch milliseconds. */
export interface LaneEntry {
  start: number;
  end: number;
  state: string;
  nodeId: number | null;
}

export interface Lane {
  name: string;
  entries: LaneEntry[];
}

/**
 * Reads lane frames (start time, end time, state, optional nodeId — the
 * shape pkg/frames.Lane writes). Frames of other shapes are skipped and named
 * in `skipped` so the panel can say why they are not drawn.
 */
export function lanesFromFrames(frames: DataFrame[]): { lanes: Lane[]; skipped: string[] } {
  const lanes: Lane[] = [];
  const skipped: string[] = [];
  frames.forEach((frame, i) => {
    const name = frame.name ?? `frame ${i}`;
    const times = frame.fields.filter((f) => f.type === FieldType.time);
    const state = frame.fields.find((f) => f.name === 'state');
    if (times.length < 2 || !state) {
      skipped.push(name);
      return;
    }
    const nodeField = frame.fields.find((f) => f.name === 'nodeId');
    const entries: LaneEntry[] = [];
    for (let r = 0; r < frame.length; r++) {
      const node = nodeField?.values[r];
      entries.push({
        start: Number(times[0].values[r]),
        end: Number(times[1].values[r]),
        state: String(state.values[r]),
        nodeId: node === null || node === undefined ? null : Number(node),
      });
    }
    entries.sort((a, b) => a.start - b.start);
    lanes.push({ name, entries });
  });
  return { lanes, skipped };
}

/** The [from, to] covered by every lane, or null when there is nothing. */
export function timeSpan(lanes: Lane[]): { from: number; to: number } | null {
  let from = Infinity;
  let to = -Infinity;
  for (const l of lanes) {
    for (const e of l.entries) {
      from = Math.min(from, e.start);
      to = Math.max(to, e.end);
    }
  }
  return from === Infinity ? null : { from, to };
}

/** How many entries of a lane have started at the playhead (binary search; entries are sorted). */
export function startedBy(lane: Lane, playhead: number): number {
  let lo = 0;
  let hi = lane.entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (lane.entries[mid].start <= playhead) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}
