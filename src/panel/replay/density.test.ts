import { lane } from '../testing/fixtures';
import { MARKS_PER_PX, buildPyramid, columnsFromEntries, columnsFromPyramid, drawingFor } from './density';

function bigLane(n: number) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    // node 1 for the first 70 %, node 2 after; every 10th an interval of 50 µs
    rows.push({ s: (i * 1000) / n, e: i % 10 === 0 ? (i * 1000) / n + 50 : undefined, node: i < 0.7 * n ? 1 : 2 });
  }
  return lane('read', rows);
}

describe('level of detail', () => {
  const l = bigLane(20_000);
  const bounds = { fromUs: 0, toUs: 1000 };
  const p = buildPyramid(l, bounds, 4096);

  it('draws few entries one by one and many as columns', () => {
    expect(drawingFor(l, { fromUs: 0, toUs: 1 }, 100, null, p).kind).toBe('marks');
    const d = drawingFor(l, bounds, 100, null, p);
    expect(d.kind).toBe('columns');
    expect(20_000).toBeGreaterThan(MARKS_PER_PX * 100);
  });

  it('keeps every event in the columns, from the pyramid or from the entries', () => {
    const fromP = columnsFromPyramid(p, bounds, 128)!;
    const direct = columnsFromEntries(l, bounds, 128, 0, l.n);
    const sum = (a: Float32Array) => a.reduce((x, y) => x + y, 0);
    expect(sum(fromP.count)).toBe(20_000);
    expect(sum(direct.count)).toBe(20_000);
    // same per column (bins are aligned to 4096 over 1000 µs, columns to 128)
    for (let x = 0; x < 128; x++) {
      expect(Math.abs(fromP.count[x] - direct.count[x])).toBeLessThanOrEqual(20_000 / 4096 + 1);
    }
  });

  it('knows the majority operator of each column and interval coverage', () => {
    const c = columnsFromPyramid(p, bounds, 10)!;
    expect(c.dom[0]).toBe(1);
    expect(c.dom[9]).toBe(2);
    expect(c.maxCover).toBeGreaterThan(0);
  });

  it('uses the entries when the window is finer than the finest bin', () => {
    expect(columnsFromPyramid(p, { fromUs: 0, toUs: 0.01 }, 100)).toBeNull();
  });

  it('draws only the filtered operator’s entries', () => {
    const d = drawingFor(l, bounds, 100, 2, p);
    expect(d.kind).toBe('columns');
    if (d.kind === 'columns') {
      expect(d.columns.count.slice(0, 69).every((v) => v === 0)).toBe(true);
      expect(d.columns.count.reduce((a, b) => a + b, 0)).toBe(6000);
    }
    const none = drawingFor(l, bounds, 100, 99, p);
    expect(none).toEqual({ kind: 'marks', lo: 0, hi: 0 });
  });
});
