import { goldenTrace } from '../testing/fixtures';
import { compareFrames } from './fixture';
import { colourIdsOfB, compareFromFrames, counterpart, isCompareResponse, rowOf, sideFacts, sideFrames } from './model';

describe('compareFromFrames on the Go golden compare response', () => {
  const frames = compareFrames();
  const c = compareFromFrames(frames).comparison!;

  it('recognises a compare response', () => {
    expect(isCompareResponse(frames)).toBe(true);
    expect(isCompareResponse(frames.slice(2))).toBe(false);
  });

  it('reads the statement verdict, counts and metrics', () => {
    expect(c.verdict).toBe(
      'elapsed 900 µs → 900 µs, operator time 870 µs → 870 µs, page reads in the trace 164 → 25; operators: 1 replaced'
    );
    expect(c.traceIdB).toBe('0190d5c2a0e87c3b9a51e2f4c6d8b0a2');
    expect(c.readsSource).toBe('physical');
    expect(c.counts).toEqual({ replaced: 1, changed: 0, added: 0, removed: 0, same: 2 });
    expect(c.statement.find((m) => m.name === 'reads')).toEqual({
      name: 'reads',
      unit: 'pages',
      a: 164,
      b: 25,
      changed: true,
    });
  });

  it('reads one row per operator pair with both sides’ figures', () => {
    expect(c.rows.map((r) => [r.status, r.nodeA, r.nodeB])).toEqual([
      ['same', 0, 0],
      ['same', 1, 1],
      ['replaced', 2, 2],
    ]);
    const seek = c.rows[2];
    expect(seek.verdict).toBe('Index Seek replaced Clustered Index Scan: page reads in the trace 152 → 13');
    expect([seek.nameA, seek.nameB]).toEqual(['Clustered Index Scan', 'Index Seek']);
    expect(seek.metrics.reads).toEqual({ a: 152, b: 13, changed: true });
    expect(seek.metrics.rows).toEqual({ a: null, b: null, changed: false });
    expect(seek.spanA).toEqual({ startUs: 310, endUs: 870 });
  });

  it('reads each side as a trace of its own', () => {
    expect(c.a.operators).toHaveLength(3);
    expect(c.b.lanes.read?.n).toBe(4);
    expect(sideFrames(frames, 'b').map((f) => f.name)).toContain('lane_read');
    expect(sideFrames(frames, 'b')).toHaveLength(frames.length / 2 - 1);
  });

  it('sums a side up from the statement metrics', () => {
    expect(sideFacts(c, 'a')).toBe('900 µs elapsed · operators 870 µs · 164 page reads in the trace · 1 spill');
    expect(sideFacts({ ...c, readsSource: 'logical' }, 'b')).toBe(
      '900 µs elapsed · operators 870 µs · 25 logical reads · 1 spill'
    );
  });

  it('says which side is missing', () => {
    const onlyA = frames.filter((f) => !f.name?.endsWith('_b'));
    expect(compareFromFrames(onlyA).error).toMatch(/trace B/);
    expect(compareFromFrames(frames.slice(1)).error).toMatch(/no compare frame/);
  });
});

describe('pairing operators across the sides', () => {
  const rows = compareFromFrames(compareFrames()).comparison!.rows;
  const added = { ...rows[2], status: 'added' as const, nodeA: null, nodeB: 7 };

  it('finds the partner of an operator, or none for an added one', () => {
    expect(counterpart(rows, 'a', 2)).toBe(2);
    expect(rowOf(rows, 'b', 1)).toBe(1);
    expect(counterpart([...rows, added], 'b', 7)).toBeNull();
    expect(counterpart(rows, 'a', null)).toBeNull();
    expect(rowOf(rows, 'a', 99)).toBe(-1);
  });

  it('colours B’s operators like their A partners, and the added ones apart', () => {
    const ids = colourIdsOfB([...rows, added], goldenTrace());
    expect([ids(0), ids(1), ids(2)]).toEqual([0, 1, 2]);
    expect(ids(7)).toBe(3);
    expect(ids(-1)).toBe(-1);
  });
});
