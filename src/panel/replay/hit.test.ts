import { goldenTrace, lane } from '../testing/fixtures';
import { describeEntry } from './describe';
import { hitEntry } from './hit';

const l = lane('lock', [
  { s: 100, e: 900, node: 1 },
  { s: 200, e: 210, node: 2 },
  { s: 500, node: 3 },
]);
const w = { fromUs: 0, toUs: 1000 };

describe('hit testing', () => {
  it('prefers the shortest entry under the pointer', () => {
    expect(hitEntry(l, w, 1000, 205, 3, null)).toBe(1);
    expect(hitEntry(l, w, 1000, 300, 3, null)).toBe(0);
  });

  it('finds a point within the tolerance, even inside a long interval, and nothing beyond it', () => {
    expect(hitEntry(l, { fromUs: 400, toUs: 600 }, 200, 102, 4, null)).toBe(2);
    expect(hitEntry(l, w, 1000, 50, 4, null)).toBe(-1);
  });

  it('skips entries of other operators when filtered', () => {
    expect(hitEntry(l, w, 1000, 205, 3, 1)).toBe(0);
    expect(hitEntry(l, w, 1000, 501, 3, 2)).toBe(-1);
  });
});

describe('describing an entry', () => {
  it('names the operator, the match rule and confidence, and an end not captured', () => {
    const trace = goldenTrace();
    const d = describeEntry(trace, trace.lanes.lock!, 1, 'us');
    const rows = Object.fromEntries(d.rows);
    expect(d.title).toBe('Lock: X');
    expect(rows.operator).toBe('2 Clustered Index Scan');
    expect(rows.match).toBe('node_id (exact confidence)');
    expect(rows.end).toMatch(/not captured/);
    expect(rows.row).toBe('OrderID=42');
  });
});
