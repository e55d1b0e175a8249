import { lane } from '../testing/fixtures';
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
