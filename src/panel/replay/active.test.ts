import { lane } from '../testing/fixtures';
import { activeAt } from './active';

describe('intervals active at a time', () => {
  const rows = [{ s: 0, e: 100_000, node: 1 }];
  for (let i = 0; i < 1000; i++) {
    rows.push({ s: i * 100, e: i * 100 + 20, node: 2 });
  }
  const l = lane('lock', rows);

  it('finds a long lock held throughout and the short one at the playhead', () => {
    const a = activeAt(l, 50_010);
    expect(a.map((i) => [l.start[i], l.end[i]])).toEqual([
      [0, 100_000],
      [50_000, 50_020],
    ]);
  });

  it('finds only the long one between short locks', () => {
    expect(activeAt(l, 50_050).map((i) => l.start[i])).toEqual([0]);
  });

  it('stops at the limit', () => {
    const many = lane(
      'lock',
      Array.from({ length: 500 }, () => ({ s: 10, e: 1000 }))
    );
    expect(activeAt(many, 500, 50)).toHaveLength(50);
  });
});
