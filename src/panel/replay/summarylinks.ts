import { LaneData, WindowUs } from '../model/trace';
import { TableIORow, WaitStat } from '../model/summary';
import { reveal } from './scale';
import { Highlight, ReplayState } from './store';

/**
 * What a click on a summary row does to the replay: a Table I/O row filters
 * the lanes to the operator that read the object (and picks out every
 * operator that did); a Wait Stats row picks out that wait type's waits on
 * the wait lane and moves the playhead to its first one.
 */

export function tableIOPatch(row: TableIORow): Partial<ReplayState> {
  const first = row.nodeIds[0] ?? null;
  return {
    filterNode: first,
    selectedNode: first,
    highlight: { source: `table:${row.object}`, nodes: row.nodeIds, events: [], current: -1, span: null },
  };
}

/** The waits of one type in a raw wait lane (a binned lane has lost the types: none). */
export function waitsOfType(lane: LaneData | undefined, waitType: string): Highlight['events'] {
  if (!lane || lane.binned) {
    return [];
  }
  const state = lane.frame.fields.find((f) => f.name === 'state');
  const out: Highlight['events'] = [];
  for (let i = 0; i < lane.n && out.length < 10_000; i++) {
    if (state?.values[lane.row[i]] === waitType) {
      out.push({ lane: 'wait', startUs: lane.start[i], endUs: lane.end[i] });
    }
  }
  return out;
}

export function waitPatch(
  w: WaitStat,
  lane: LaneData | undefined,
  s: Pick<ReplayState, 'window'>,
  bounds: WindowUs
): Partial<ReplayState> {
  const events = waitsOfType(lane, w.waitType);
  return {
    playing: false,
    playheadUs: w.firstUs,
    window: reveal(s.window, w.firstUs, bounds),
    stepLane: 'wait',
    filterNode: null,
    highlight: { source: `wait:${w.waitType}`, nodes: [], events, current: events.length ? 0 : -1, span: null },
  };
}
