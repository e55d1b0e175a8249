import { goldenTrace } from '../testing/fixtures';
import { ALL_LANES } from '../model/lanes';
import { layoutTimeline, rowAt } from './layout';

const trace = goldenTrace();

describe('timeline layout', () => {
  it('stacks the plan rows, then every shown lane, inside the panel', () => {
    const l = layoutTimeline(1000, 400, ALL_LANES, trace.operators);
    expect(l.plan!.rows.map((r) => r.nodeId)).toEqual([0, 1, 2]);
    expect(l.lanes.map((b) => b.name)).toEqual(['read', 'write', 'lock', 'wait', 'memory', 'split', 'log', 'io']);
    const last = l.lanes[l.lanes.length - 1];
    expect(last.y + last.h).toBeLessThanOrEqual(400);
    expect(rowAt(l, l.plan!.rows[1].y + 1)).toEqual({ kind: 'plan', nodeId: 1 });
    expect(rowAt(l, l.lanes[2].y + 1)).toEqual({ kind: 'lane', name: 'lock' });
  });

  it('gives a parallel operator one sub-row per thread when there is room', () => {
    const l = layoutTimeline(1000, 600, ALL_LANES, trace.operators);
    const scan = l.plan!.rows.find((r) => r.nodeId === 2)!;
    expect(scan.threads.map((t) => t.thread)).toEqual([1, 2]);
    expect(scan.threads[1].y + scan.threads[1].h).toBeLessThanOrEqual(scan.y + scan.h);
    // rows of a few pixels are too thin for sub-rows
    const small = layoutTimeline(454, 60, ALL_LANES, trace.operators);
    expect(small.plan!.rows.find((r) => r.nodeId === 2)!.threads).toEqual([]);
  });

  it('fits a 6×8 grid panel with every lane at least 8 px', () => {
    const l = layoutTimeline(454, 160, ALL_LANES, trace.operators);
    expect(l.labelW).toBeLessThan(70);
    expect(Math.min(...l.lanes.map((b) => b.h))).toBeGreaterThanOrEqual(8);
  });
});
