import { goldenFrames, goldenTrace } from '../testing/fixtures';
import { optionsText, rowsText, summariesFromFrames, waitsByClass } from './summary';
import { tableIOPatch, waitPatch, waitsOfType } from '../replay/summarylinks';

// The Go side's golden response (pkg/frames sample: Customers read by node
// 1 with plan counters, Orders by node 2 without; PAGEIOLATCH_SH 100 µs,
// CXPACKET 50 µs).
describe('summaries from the frames', () => {
  const s = summariesFromFrames(goldenFrames('trace_response'));

  it('reads the header facts from the trace frame', () => {
    expect(s.facts).toMatchObject({
      database: 'QueryReplayDemo',
      serverVersion: '14.0.3192.2',
      rows: 12,
      logicalReads: 3,
      physicalReads: 1,
      readAheads: 2,
      cpuMs: 7,
      pageReads: 4,
      waitUs: 150,
      warnings: ['sample warning'],
    });
    expect(s.facts?.statement).toMatch(/^SELECT c.Name/);
    expect(s.facts?.options.events).toContain('locks');
    expect(optionsText(s.facts!.options)).toEqual(['warm cache', 'modification rolled back']);
    expect(rowsText(s.facts!)).toBe('12 rows');
  });

  it('reads Table I/O with null counters kept null', () => {
    expect(s.tableIO?.map((r) => [r.table, r.index, r.logicalReads, r.pageReads, r.locks, r.nodeIds])).toEqual([
      ['dbo.Customers', 'PK_Customers', 3, 1, 1, [1]],
      ['dbo.Orders', 'PK_Orders', null, 2, 1, [2]],
    ]);
  });

  it('reads Wait Stats and totals them by class', () => {
    expect(s.waits?.map((w) => [w.waitType, w.waitClass, w.waits, w.waitUs])).toEqual([
      ['PAGEIOLATCH_SH', 'Buffer IO', 1, 100],
      ['CXPACKET', 'Parallelism', 1, 50],
    ]);
    expect(waitsByClass(s.waits!).map((c) => [c.waitClass, c.waitUs])).toEqual([
      ['Buffer IO', 100],
      ['Parallelism', 50],
    ]);
    expect(
      waitsByClass([
        { waitType: 'A', waitClass: 'Other', waits: 2, waitUs: 5, untimed: 0, firstUs: 0 },
        { waitType: 'B', waitClass: 'Other', waits: 1, waitUs: 7, untimed: 0, firstUs: 0 },
        { waitType: 'C', waitClass: 'Lock', waits: 1, waitUs: 3, untimed: 0, firstUs: 0 },
      ])
    ).toEqual([
      { waitClass: 'Other', waits: 3, waitUs: 12, types: ['A', 'B'] },
      { waitClass: 'Lock', waits: 1, waitUs: 3, types: ['C'] },
    ]);
  });

  it('has no summaries when the response lacks their frames (a zoom)', () => {
    const zoom = summariesFromFrames(
      goldenFrames('trace_response').filter((f) => !['table_io', 'wait_stats'].includes(f.name!))
    );
    expect(zoom.tableIO).toBeNull();
    expect(zoom.waits).toBeNull();
  });

  it('says rows returned and affected as the terminal does', () => {
    expect(rowsText({ rows: 1, rowsAffected: 0 })).toBe('1 row');
    expect(rowsText({ rows: 0, rowsAffected: 5 })).toBe('0 rows returned, 5 affected');
    expect(
      optionsText({ clearBufferPool: true, disableReadAhead: true, callStacks: true, modification: false, events: [] })
    ).toEqual(['cold cache, read-ahead off', 'call stacks']);
  });
});

describe('summary links to the timeline', () => {
  const trace = goldenTrace();
  const s = summariesFromFrames(goldenFrames('trace_response'));

  it('filters the lanes to the operator that read a table', () => {
    const p = tableIOPatch(s.tableIO![1]);
    expect(p.filterNode).toBe(2);
    expect(p.highlight?.nodes).toEqual([2]);
  });

  it('picks out the waits of a type and moves the playhead to the first', () => {
    const cx = s.waits!.find((w) => w.waitType === 'CXPACKET')!;
    const bounds = { fromUs: trace.startUs, toUs: trace.endUs };
    const p = waitPatch(cx, trace.lanes.wait, { window: { fromUs: 0, toUs: 100 } }, bounds);
    expect(p.playheadUs).toBe(850);
    expect(p.window!.fromUs).toBeLessThanOrEqual(850);
    expect(p.window!.toUs).toBeGreaterThanOrEqual(850);
    expect(p.highlight?.events).toEqual([{ lane: 'wait', startUs: 850, endUs: expect.any(Number) }]);
    expect(waitsOfType(trace.lanes.wait, 'PAGEIOLATCH_SH')).toHaveLength(1);
  });
});
