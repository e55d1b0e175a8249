import { toDataFrame, FieldType } from '@grafana/data';
import { goldenFrames, goldenTrace, laneFrame } from '../testing/fixtures';
import { laneFromFrame, stackIdOf, traceFromFrames } from './trace';

describe('traceFromFrames on the Go golden response', () => {
  const trace = goldenTrace();

  it('reads the trace meta frame', () => {
    expect(trace.traceId).toBe('0190d5c2a0e87c3b9a51e2f4c6d8b0a1');
    expect(trace.startUs).toBe(0);
    expect(trace.endUs).toBe(900);
    expect(trace.database).toBe('QueryReplayDemo');
    expect(trace.lost).toBe(3);
    expect(trace.warnings).toEqual(['sample warning']);
    expect(trace.zeroMs).toBe(Date.parse('2026-11-29T12:00:00.000123Z'));
  });

  it('orders operators as a tree with their phases', () => {
    expect(trace.operators.map((o) => [o.nodeId, o.depth, o.order])).toEqual([
      [0, 0, 0],
      [1, 1, 1],
      [2, 1, 2],
    ]);
    const join = trace.byNode.get(0)!;
    expect(join.children).toEqual([1, 2]);
    expect(join.phases.map((p) => p.kind)).toEqual(['build', 'probe']);
    expect(join.actualRows).toBe(12);
    expect(trace.byNode.get(2)!.actualRows).toBeNull();
    expect(trace.operators.every((o) => o.executed)).toBe(true);
  });

  it('reads every lane as sorted columns with unmatched entries as -1', () => {
    const read = trace.lanes.read!;
    expect(read.n).toBe(4);
    expect(Array.from(read.start)).toEqual([30, 320, 330, 500]);
    expect(Array.from(read.node)).toEqual([1, 2, 2, -1]);
    expect(read.binned).toBe(false);
    const lock = trace.lanes.lock!;
    expect(Array.from(lock.end)).toEqual([31, 900]);
    expect(Array.from(lock.maxEnd)).toEqual([31, 900]);
    expect(Object.keys(trace.lanes).sort()).toEqual(['io', 'lock', 'log', 'memory', 'read', 'split', 'wait', 'write']);
  });

  it('reads pages and call stacks', () => {
    expect(trace.pages!.n).toBe(3);
    expect(trace.pages!.pageId).toEqual(['1:9', '1:280', '1:312']);
    expect(trace.pages!.pageInfo).toBe(true);
    // page 9 has no header; 280 and 312 are leaves with neighbours
    expect(trace.pages!.indexLevel).toEqual([null, 0, 0]);
    expect(trace.pages!.prevPage).toEqual([null, null, '1:311']);
    expect(trace.pages!.nextPage).toEqual([null, '1:281', '1:313']);
    expect(trace.callstacks!.map((f) => f.level)).toEqual([0, 1, 2, 3, 1, 2, 3]);
    expect(trace.callstacks![3].moduleBadge).toBe('Storage Engine');
  });

  it("reads each event's own stack and the lane rows that name it", () => {
    expect([...trace.stacks!.keys()]).toEqual([1, 2]);
    const s1 = trace.stacks!.get(1)!;
    expect(s1.map((f) => f.label)).toEqual([
      'sqlmin!BPool::Get+0x10',
      'sqlmin!IndexDataSetSession::GetNextRowValuesInternal+0x2a',
      'sqldk!SOS_Task::Param::Execute+0x1f',
    ]);
    expect(s1[0]).toMatchObject({ badge: 'BufferPool', moduleBadge: 'Storage Engine', infrastructure: false });
    expect(s1[2].infrastructure).toBe(true);
    expect(trace.stacks!.get(2)![2].unresolved).toMatch(/PDB not found/);
    const read = trace.lanes.read!;
    expect(stackIdOf(read, 0)).toBe(1);
    expect(stackIdOf(read, 3)).toBeNull();
    expect(stackIdOf(trace.lanes.lock!, 0)).toBe(2);
  });
});

describe('traceFromFrames edge cases', () => {
  it('passes on the notice of a trace query that ran nothing', () => {
    const text = 'This trace has not run: … Press Execute to run it.';
    const notice = toDataFrame({ name: 'notice', fields: [] });
    notice.meta = { notices: [{ severity: 'info', text }] };
    expect(traceFromFrames([notice])).toEqual({ error: text });
  });

  it('reads binned view frames', () => {
    const r = traceFromFrames(goldenFrames('view_binned'));
    const read = r.trace!.lanes.read!;
    expect(read.binned).toBe(true);
    expect(read.binWidthUs).toBeGreaterThan(0);
    // weights are the bins' counts and add up to what the lane holds in the window
    expect(Array.from(read.weight).reduce((a, b) => a + b, 0)).toBe(read.inWindow);
  });

  it('says why when no frame is a trace', () => {
    expect(traceFromFrames([]).error).toMatch(/no frames/);
    const other = toDataFrame({ name: 'cpu', fields: [{ name: 'v', type: FieldType.number, values: [1] }] });
    expect(traceFromFrames([other]).error).toMatch(/found: cpu/);
  });

  it('re-sorts lane rows that arrive out of order and keeps the frame row', () => {
    const lane = laneFromFrame('wait', laneFrame('wait', [{ s: 50, e: 60 }, { s: 10, e: 200 }, { s: 30 }]), {
      fromUs: 0,
      toUs: 300,
    });
    expect(Array.from(lane.start)).toEqual([10, 30, 50]);
    expect(Array.from(lane.row)).toEqual([1, 2, 0]);
    expect(Array.from(lane.maxEnd)).toEqual([200, 200, 200]);
  });

  it('marks operators with zero executions as not executed', () => {
    const ops = toDataFrame({
      name: 'operators',
      fields: [
        { name: 'nodeId', type: FieldType.number, values: [0, 1] },
        { name: 'parentId', type: FieldType.number, values: [null, 0] },
        { name: 'physicalOp', type: FieldType.string, values: ['Nested Loops', 'Index Seek'] },
        { name: 'startUs', type: FieldType.number, values: [0, 0] },
        { name: 'endUs', type: FieldType.number, values: [100, 0] },
        { name: 'actualExecutions', type: FieldType.number, values: [1, 0] },
      ],
    });
    const t = traceFromFrames([ops]).trace!;
    expect(t.byNode.get(1)!.executed).toBe(false);
    expect(t.byNode.get(0)!.executed).toBe(true);
    expect(t.endUs).toBe(100);
  });
});

describe('schema 2 fields of the frames', () => {
  const trace = goldenTrace();

  it('attaches per-thread bars to parallel operators', () => {
    const scan = trace.byNode.get(2)!;
    expect(scan.threads.map((t) => [t.thread, t.startUs, t.endUs, t.rows])).toEqual([
      [1, 310, 860, 6000],
      [2, 315, 870, 4000],
    ]);
    expect(trace.byNode.get(0)!.threads).toEqual([]);
  });

  it('keeps open intervals and ambiguous matches as flags', () => {
    expect(Array.from(trace.lanes.lock!.open!)).toEqual([0, 1]);
    // no read is ambiguous in the sample, so no column is kept
    expect(trace.lanes.read!.ambiguous).toBeNull();
  });

  it('reads notExecuted and its reason', () => {
    const ops = toDataFrame({
      name: 'operators',
      fields: [
        { name: 'nodeId', type: FieldType.number, values: [0, 1] },
        { name: 'parentId', type: FieldType.number, values: [null, 0] },
        { name: 'physicalOp', type: FieldType.string, values: ['Adaptive Join', 'Index Seek'] },
        { name: 'notExecuted', type: FieldType.boolean, values: [false, true] },
        { name: 'notExecutedReason', type: FieldType.string, values: ['', "an adaptive join's unused input"] },
      ],
    });
    const t = traceFromFrames([ops]).trace!;
    expect(t.byNode.get(1)!.executed).toBe(false);
    expect(t.byNode.get(1)!.notExecutedReason).toBe("an adaptive join's unused input");
    expect(t.byNode.get(0)!.executed).toBe(true);
  });
});
