import { abbreviate, fitLabel, labelCandidates, labelColumnWidth, objectParts } from './labels';

// a fixed-width measure: 6 px a character, like an 11 px UI font on average
const measure = (s: string) => s.length * 6;

describe('operator labels', () => {
  it('reads schema, table and index from dotted and bracketed plan objects', () => {
    expect(objectParts('dbo.Orders.PK_Orders')).toEqual({ schema: 'dbo', table: 'Orders', index: 'PK_Orders' });
    expect(objectParts('[Sales].[Order.Lines].[IX_A]')).toEqual({
      schema: 'Sales',
      table: 'Order.Lines',
      index: 'IX_A',
    });
    expect(objectParts('#t')).toEqual({ schema: '', table: '#t', index: '' });
    expect(objectParts('')).toEqual({ schema: '', table: '', index: '' });
  });

  it('abbreviates the way DBAs write operator names', () => {
    expect(abbreviate('Clustered Index Scan')).toBe('CI Scan');
    expect(abbreviate('Nonclustered Index Seek')).toBe('NCI Seek');
    expect(abbreviate('Index Seek')).toBe('Ix Seek');
    expect(abbreviate('Stream Aggregate')).toBe('Stream Agg');
    expect(abbreviate('Sort')).toBe('Sort');
  });

  it('keeps the table that tells two scans apart when the column is narrow', () => {
    const a = { nodeId: 1, name: 'Clustered Index Scan', object: 'dbo.Customers.PK_Customers' };
    const b = { nodeId: 2, name: 'Clustered Index Scan', object: 'dbo.Orders.PK_Orders' };
    for (const w of [100, 130, 160, 200, 400]) {
      const la = fitLabel(labelCandidates(a), w, measure);
      const lb = fitLabel(labelCandidates(b), w, measure);
      expect(measure(la)).toBeLessThanOrEqual(w);
      expect(la).not.toContain('…');
      expect(la).toContain('Customers');
      expect(lb).toContain('Orders');
      expect(la).not.toBe(lb);
    }
    expect(fitLabel(labelCandidates(b), 400, measure)).toBe('2 Clustered Index Scan · Orders.PK_Orders');
    expect(fitLabel(labelCandidates(b), 120, measure)).toBe('2 CI Scan · Orders');
  });

  it('clips only when even the shortest label does not fit', () => {
    const op = { nodeId: 12, name: 'Clustered Index Scan', object: 'dbo.OrderLinesArchive2019' };
    const l = fitLabel(labelCandidates(op), 60, measure);
    expect(l.endsWith('…')).toBe(true);
    expect(measure(l)).toBeLessThanOrEqual(60);
  });

  it('widens the label column with the panel', () => {
    expect(labelColumnWidth(400)).toBe(58);
    expect(labelColumnWidth(800)).toBe(128);
    expect(labelColumnWidth(1280)).toBeGreaterThan(labelColumnWidth(800));
    expect(labelColumnWidth(4000)).toBe(260);
  });
});
