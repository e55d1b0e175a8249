import { compareFrames } from './fixture';
import { compareFromFrames, PairRow } from './model';
import { COLUMNS, breakdown, cellPair, columnsFor, direction, formatPair, pairName, visibleColumns } from './table';

const rows = compareFromFrames(compareFrames()).comparison!.rows;
const col = (key: string) => COLUMNS.find((c) => c.key === key)!;

describe('the comparison table', () => {
  it('shows only the columns some operator has figures in', () => {
    expect(visibleColumns(rows).map((c) => c.key)).toEqual([
      'reads',
      'time',
      'waits',
      'spills',
      'phases',
      'locks',
      'splits',
      'log',
    ]);
  });

  it('puts the columns with significant changes first and keeps what fits', () => {
    expect(columnsFor(rows, 2000).map((c) => c.key)).toEqual([
      'reads',
      'time',
      'waits',
      'spills',
      'phases',
      'locks',
      'splits',
      'log',
    ]);
    const spill = { ...rows[0], metrics: { ...rows[0].metrics, spills: { a: 1, b: 0, changed: true } } };
    expect(columnsFor([spill, ...rows.slice(1)], 260 + 2 * 88).map((c) => c.key)).toEqual(['reads', 'spills']);
    expect(columnsFor(rows, 300)).toEqual([]);
  });

  it('writes a changed pair as A → B and an unchanged one once', () => {
    const seek = rows[2];
    expect(formatPair(cellPair(seek, col('reads')), 'pages')).toBe('152 → 13');
    expect(formatPair(cellPair(seek, col('time')), 'us')).toBe('560 µs');
    expect(formatPair({ a: null, b: 26, changed: true }, 'pages')).toBe('– → 26');
    expect(formatPair({ a: null, b: null, changed: false }, 'pages')).toBe('');
  });

  it('sums the wait categories and lists the phases one by one', () => {
    const scan = rows[1];
    expect(cellPair(scan, col('waits'))).toEqual({ a: 100, b: 100, changed: false });
    expect(breakdown(rows[0], col('phases'))).toEqual([
      { name: 'build', text: '290 µs', pair: { a: 290, b: 290, changed: false } },
      { name: 'probe', text: '580 µs', pair: { a: 580, b: 580, changed: false } },
    ]);
  });

  it('labels the waits with the shared wait table categories, Other included', () => {
    // pkg/timeline/waitclasses.tsv: Io, Cpu, Concurrency, Parallelism, Other
    // (the probe frame's categories); the compare frame has a column for each.
    const waits = col('waits');
    expect(waits.metrics).toEqual(['waitIoUs', 'waitCpuUs', 'waitConcurrencyUs', 'waitParallelismUs', 'waitOtherUs']);
    expect(waits.metrics.map((m) => waits.names?.[m])).toEqual(['I/O', 'CPU', 'concurrency', 'parallelism', 'other']);
    const other = { ...rows[1], metrics: { ...rows[1].metrics, waitOtherUs: { a: 50, b: 20, changed: true } } };
    expect(cellPair(other, waits)).toEqual({ a: 150, b: 120, changed: true });
    expect(rows[1].metrics.waitOtherUs).toBeDefined();
  });

  it('says whether a significant change is better or worse', () => {
    expect(direction(cellPair(rows[2], col('reads')), col('reads'))).toBe('better');
    expect(direction({ a: 2, b: 9, changed: true }, col('spills'))).toBe('worse');
    expect(direction({ a: 2, b: 9, changed: false }, col('spills'))).toBeNull();
    expect(direction({ a: 2, b: 9, changed: true }, col('rows'))).toBeNull();
  });

  it('names a replaced operator by both names', () => {
    expect(pairName(rows[2])).toEqual({
      name: 'Clustered Index Scan → Index Seek',
      object: 'dbo.Orders.PK_Orders → dbo.Orders.IX_Orders_CustomerID',
      nodes: '2 → 2',
    });
    const added: PairRow = { ...rows[1], status: 'added', nodeA: null, nameB: 'Key Lookup' };
    expect(pairName(added).name).toBe('Key Lookup');
    expect(pairName(added).nodes).toBe('– → 1');
  });
});
