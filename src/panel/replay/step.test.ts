import { lane } from '../testing/fixtures';
import { entryAt, stepTime } from './step';

const reads = lane('read', [
  { s: 10, node: 1 },
  { s: 40, node: 2 },
  { s: 90, node: 1 },
]);
const locks = lane('lock', [
  { s: 20, e: 30, node: 2 },
  { s: 60, e: 95, node: 1 },
]);
const bins = lane('wait', [{ s: 0, e: 50, count: 3 }], {});

describe('stepping', () => {
  it('goes to the next and previous event over all lanes', () => {
    expect(stepTime([reads, locks], 10, 1, null)).toBe(20);
    expect(stepTime([reads, locks], 20, 1, null)).toBe(40);
    expect(stepTime([reads, locks], 60, -1, null)).toBe(40);
    expect(stepTime([reads, locks], 90, 1, null)).toBeNull();
    expect(stepTime([reads, locks], 10, -1, null)).toBeNull();
  });

  it('steps through one lane or one operator', () => {
    expect(stepTime([locks], 0, 1, null)).toBe(20);
    expect(stepTime([reads, locks], 10, 1, 1)).toBe(60);
    expect(stepTime([reads, locks], 90, -1, 2)).toBe(40);
  });

  it('steps to a bin’s first event', () => {
    const b = lane('wait', [{ s: 0, e: 50, count: 3 }]);
    b.first[0] = 12;
    expect(stepTime([b], 0, 1, null)).toBe(12);
    expect(bins.binned).toBe(true);
  });

  it('finds the entry a step landed on', () => {
    expect(entryAt(reads, 40, null)).toBe(1);
    expect(entryAt(reads, 40, 1)).toBe(-1);
  });
});
