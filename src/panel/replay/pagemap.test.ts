import { goldenTrace } from '../testing/fixtures';
import { Pages } from '../model/trace';
import { chainOrder, firstTouchedBetween, layoutPages, pageTiming, readBetween, touchedBy } from './pagemap';

const trace = goldenTrace();
const pages = trace.pages!;

describe('page map', () => {
  it('lays out every page of each object, biggest object first, in page order', () => {
    const l = layoutPages(pages, 'allocations', 300, 200);
    expect(l.unavailable).toBeNull();
    expect(l.shown).toBe(3);
    expect(l.cell).toBe(12);
    expect(l.headers.map((h) => h.text)).toEqual([
      'dbo.Customers.PK_Customers · 1 pages',
      'dbo.Orders.PK_Orders · 1 pages',
      'unresolved pages · 1 pages',
    ]);
  });

  it('shrinks cells until many pages fit', () => {
    const n = 5000;
    const many: Pages = {
      ...pages,
      n,
      database: new Float64Array(n).fill(5),
      file: new Float64Array(n).fill(1),
      page: Float64Array.from({ length: n }, (_, i) => i),
      pageId: Array.from({ length: n }, (_, i) => `1:${i}`),
      object: Array.from({ length: n }, () => 'dbo.T.PK'),
      reads: new Float64Array(n),
      writes: new Float64Array(n),
      firstUs: new Float64Array(n),
      lastUs: new Float64Array(n),
      node: new Int32Array(n),
      pageType: new Array(n).fill(null),
      indexLevel: Array.from({ length: n }, (_, i) => (i === 0 ? 1 : 0)),
    };
    const l = layoutPages(many, 'allocations', 300, 200);
    expect(l.shown).toBe(n);
    expect(l.cell).toBeLessThan(4);
    const idx = layoutPages(many, 'index', 300, 200);
    expect(idx.headers.map((h) => h.text)).toEqual([
      'dbo.T.PK · level 1 (root) · 1 pages',
      'dbo.T.PK · level 0 (leaf) · 4,999 pages',
    ]);
  });

  it('explains that the Index view needs page headers', () => {
    const none: Pages = { ...pages, indexLevel: pages.indexLevel.map(() => null), pageInfo: false };
    expect(layoutPages(none, 'index', 300, 200).unavailable).toMatch(/page headers/);
    // the golden trace has headers for two leaves
    expect(layoutPages(pages, 'index', 300, 200).unavailable).toBeNull();
  });

  it('lights pages up as reads pass and colours written pages', () => {
    const t = pageTiming(pages, trace.lanes.read, trace.lanes.write);
    expect(touchedBy(t, 29)).toBe(0);
    expect(touchedBy(t, 320)).toBe(2);
    expect(firstTouchedBetween(t, 30, 320)).toEqual([1, 2]);
    // the read lane touches 1:312 at 320 and 330
    expect(readBetween(t, 315, 335).map((i) => pages.pageId[i])).toEqual(['1:312', '1:312']);
    expect(t.firstWrite[pages.pageId.indexOf('1:312')]).toBe(600);
    expect(t.firstWrite[pages.pageId.indexOf('1:280')]).toBe(Infinity);
  });
});

describe('index view', () => {
  const leaf = (
    ids: number[],
    prev: Array<number | null>,
    next: Array<number | null>,
    level: Array<number | null>
  ): Pages => {
    const n = ids.length;
    const id = (v: number | null) => (v === null ? null : `1:${v}`);
    return {
      ...pages,
      n,
      database: new Float64Array(n).fill(5),
      file: new Float64Array(n).fill(1),
      page: Float64Array.from(ids),
      pageId: ids.map((i) => `1:${i}`),
      object: ids.map(() => 'dbo.T.PK'),
      reads: new Float64Array(n),
      writes: new Float64Array(n),
      firstUs: new Float64Array(n),
      lastUs: new Float64Array(n),
      node: new Int32Array(n),
      pageType: level.map((l) => (l === null ? null : l === 0 ? 'DATA_PAGE' : 'INDEX_PAGE')),
      indexLevel: level,
      prevPage: prev.map(id),
      nextPage: next.map(id),
      pageInfo: true,
    };
  };

  it('orders a level along its pages’ previous/next links, not by page id', () => {
    // leaf chain 30 → 12 → 50 (a page split put 12 between them), root 7
    const p = leaf([7, 12, 30, 50], [null, 30, null, 12], [null, 50, 12, null], [1, 0, 0, 0]);
    expect(chainOrder(p, [1, 2, 3]).map((i) => p.page[i])).toEqual([30, 12, 50]);
    const l = layoutPages(p, 'index', 300, 200);
    expect(l.headers.map((h) => h.text)).toEqual([
      'dbo.T.PK · level 1 (root) · 1 pages',
      'dbo.T.PK · level 0 (leaf) · 3 pages',
    ]);
    // the root row above the leaf row; leaves left to right in chain order
    expect(l.y[0]).toBeLessThan(l.y[1]);
    expect(l.x[2]).toBeLessThan(l.x[1]);
    expect(l.x[1]).toBeLessThan(l.x[3]);
  });

  it('keeps pages the links do not reach, and a cycle ends', () => {
    const p = leaf([1, 2, 3], [2, 1, null], [2, 1, null], [0, 0, 0]);
    expect(chainOrder(p, [0, 1, 2]).sort()).toEqual([0, 1, 2]);
  });
});
