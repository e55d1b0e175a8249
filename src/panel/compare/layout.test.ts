import { goldenTrace } from '../testing/fixtures';
import { naturalHeight, sideHeights } from './layout';

describe('sharing the height between A and B', () => {
  it('halves the room when both need more', () => {
    expect(sideHeights(400, 500, 600)).toEqual([200, 200]);
  });

  it('gives what one side does not need to the other', () => {
    expect(sideHeights(400, 100, 600)).toEqual([100, 300]);
    expect(sideHeights(400, 600, 100)).toEqual([300, 100]);
    expect(sideHeights(400, 100, 120)).toEqual([100, 120]);
  });

  it('keeps a timeline at least 40 px high', () => {
    expect(sideHeights(50, 300, 300)).toEqual([40, 40]);
  });

  it('needs the axis, 28 px per operator and 44 px per lane at most', () => {
    const t = goldenTrace();
    expect(naturalHeight(['plan', 'read', 'lock'], t)).toBe(18 + 3 * 28 + 2 * 44 + 2);
    expect(naturalHeight(['read'], t)).toBe(18 + 44 + 2);
  });
});
