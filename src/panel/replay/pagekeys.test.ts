import { createTheme } from '@grafana/data';
import { paletteFromTheme } from '../render/palette';
import { pageColor, pageKeys, shortObject } from './pagekeys';
import { INDEX_UNAVAILABLE, layoutPages } from './pagemap';
import { Operator, Pages } from '../model/trace';

function pagesOf(nodes: number[]): Pages {
  const n = nodes.length;
  return {
    n,
    database: new Float64Array(n).fill(5),
    file: new Float64Array(n).fill(1),
    page: Float64Array.from(nodes.map((_, i) => 100 + i)),
    pageId: nodes.map((_, i) => `1:${100 + i}`),
    object: nodes.map(() => 'dbo.Orders.PK_Orders'),
    reads: new Float64Array(n).fill(1),
    writes: new Float64Array(n),
    firstUs: new Float64Array(n),
    lastUs: new Float64Array(n),
    node: Int32Array.from(nodes),
    pageType: nodes.map(() => null),
    indexLevel: nodes.map(() => null),
    prevPage: nodes.map(() => null),
    nextPage: nodes.map(() => null),
    pageInfo: false,
  };
}

const op = (nodeId: number, name: string, object: string) => ({ nodeId, name, object }) as Operator;

describe('page map legend', () => {
  const palette = paletteFromTheme(createTheme({ colors: { mode: 'dark' } }));
  const byNode = new Map([
    [1, op(1, 'Clustered Index Scan', '[dbo].[Customers].[PK_Customers]')],
    [2, op(2, 'Clustered Index Scan', '[dbo].[Orders].[PK_Orders]')],
  ]);

  // Issue 28: the legend said yellow = read while Orders pages were drawn blue.
  it('lists the colour each page is drawn in, by operator', () => {
    const pages = pagesOf([2, 2, 1]);
    const keys = pageKeys(pages, byNode, palette, 'operator');
    for (let i = 0; i < pages.n; i++) {
      const drawn = pageColor('read', pages.node[i], palette, 'operator');
      const key = keys.find((k) => k.color === drawn);
      expect(key?.label).toContain(i === 2 ? 'Customers' : 'Orders');
    }
    expect(keys.map((k) => k.label)).toEqual([
      'being read',
      'read by 1 Clustered Index Scan Customers.PK_Customers',
      'read by 2 Clustered Index Scan Orders.PK_Orders',
      'written',
      'not yet',
    ]);
  });

  it('uses the read lane colour when colouring by lane', () => {
    const keys = pageKeys(pagesOf([2]), byNode, palette, 'lane');
    expect(keys.find((k) => k.label === 'read')?.color).toBe(pageColor('read', 2, palette, 'lane'));
    expect(pageColor('read', 2, palette, 'lane')).toBe(palette.lane.read);
  });

  it('shortens object names', () => {
    expect(shortObject('[dbo].[Orders].[PK_Orders]')).toBe('Orders.PK_Orders');
    expect(shortObject('dbo.Heap')).toBe('dbo.Heap');
  });

  it('explains an empty Index view without naming frame fields', () => {
    const layout = layoutPages(pagesOf([1]), 'index', 300, 200);
    expect(layout.unavailable).toBe(INDEX_UNAVAILABLE);
    expect(layout.unavailable).not.toMatch(/pageInfo|frame/);
    expect(layout.unavailable).toMatch(/page header/);
  });
});
